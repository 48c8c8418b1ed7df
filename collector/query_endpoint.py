"""A ClickHouse-compatible HTTP query endpoint over the embedded store the collector owns.

chdb lets one process open a store; this endpoint lets every other process (``tracerl sql``, the
builder, the trainer, clickhouse-connect, any ClickHouse HTTP tool) reach it as it would reach a
server. It speaks the part of ClickHouse's HTTP interface those clients use: ``/ping``, the query
in the ``query`` URL parameter and/or the body, ``FORMAT``, ``default_format``, ``database``,
``param_<name>`` query parameters, compressed bodies, and INSERTs with data in the body. Settings
sent as URL parameters are accepted and ignored. ClickHouse itself (chdb) runs every statement.

With a token configured, reads stay open and writes and DDL need it (``Authorization: Bearer``,
the basic-auth password, or ``X-ClickHouse-Key``); anonymous reads then run with ClickHouse's
``readonly=1``, which also rules out table functions such as ``file()`` and ``url()``.
"""

from __future__ import annotations

import base64
import hmac
import json
import logging
import re
import uuid
from urllib.parse import parse_qsl, urlsplit

from tracerl.store.engine import EmbeddedEngine, EngineQueryError
from tracerl.store.statements import (
    is_insert,
    is_read_only,
    split_format,
    split_insert_body,
    writes_local_file,
)

from .httpbase import BadBody, BodyTooLarge, Handler, Server

log = logging.getLogger("tracerl.collector")

_ERROR_CODE = re.compile(r"Code:\s*(\d+)")
_CONTENT_TYPES = {
    "JSON": "application/json; charset=UTF-8",
    "JSONEachRow": "application/x-ndjson; charset=UTF-8",
    "JSONCompact": "application/json; charset=UTF-8",
    "CSV": "text/csv; charset=UTF-8; header=absent",
    "CSVWithNames": "text/csv; charset=UTF-8; header=present",
    "Native": "application/octet-stream",
    "RowBinary": "application/octet-stream",
    "Parquet": "application/octet-stream",
    "Arrow": "application/octet-stream",
}


def make_handler(engine: EmbeddedEngine, token: str, max_body_bytes: int) -> type[Handler]:
    class QueryHandler(Handler):
        def _authorized(self) -> bool:
            if not token:
                return True
            auth = self.headers.get("Authorization", "")
            supplied = ""
            if auth.startswith("Bearer "):
                supplied = auth[7:]
            elif auth.startswith("Basic "):
                try:
                    supplied = base64.b64decode(auth[6:]).decode().partition(":")[2]
                except ValueError:
                    supplied = ""
            supplied = supplied or self.headers.get("X-ClickHouse-Key", "")
            return bool(supplied) and hmac.compare_digest(supplied, token)

        def _error(self, status: int, message: str) -> None:
            m = _ERROR_CODE.search(message)
            code = m.group(1) if m else "0"
            text = message if message.startswith("Code:") else f"Code: {code}. DB::Exception: {message}"
            self.send_body(status, (text.rstrip() + "\n").encode(), "text/plain; charset=UTF-8",
                           {"X-ClickHouse-Exception-Code": code})

        def do_GET(self):  # noqa: N802
            self._handle(post=False)

        def do_POST(self):  # noqa: N802
            self._handle(post=True)

        def _handle(self, post: bool) -> None:
            url = urlsplit(self.path)
            if url.path in ("/ping", "/") and not url.query and not post:
                return self.send_body(200, b"Ok.\n", "text/plain; charset=UTF-8")
            if url.path not in ("/", "/query"):
                return self._error(404, f"Code: 0. DB::Exception: no such path {url.path}")
            params = dict(parse_qsl(url.query, keep_blank_values=True))
            try:
                body = self.read_body() if post else b""
            except BodyTooLarge as exc:
                return self._error(413, f"Code: 0. DB::Exception: {exc}")
            except BadBody as exc:
                return self._error(400, f"Code: 0. DB::Exception: {exc}")
            url_query = params.get("query")
            data = b""
            if url_query is None:
                with_data = split_insert_body(body)
                if with_data:  # INSERT ... FORMAT X, newline, then the data
                    sql, data_fmt, data = with_data
                    sql = f"{sql} FORMAT {data_fmt}"
                else:
                    sql = body.decode("utf-8", "replace")
            elif body and is_insert(url_query):
                sql, data = url_query, body
            else:
                sql = url_query + (" " + body.decode("utf-8", "replace") if body else "")
            if not sql.strip():
                return self._error(400, "Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)")
            if writes_local_file(sql):
                return self._error(400, "Code: 48. DB::Exception: INTO OUTFILE is not supported over HTTP; "
                                        "read the result from the response instead. (NOT_IMPLEMENTED)")
            trusted = self._authorized()
            if not is_read_only(sql) and not trusted:
                return self._error(401, "Code: 516. DB::Exception: writes and DDL on this endpoint need the "
                                        "collector's token. (AUTHENTICATION_FAILED)")
            query_params = {k[6:]: v for k, v in params.items() if k.startswith("param_")}
            database = params.get("database") or None
            fmt = params.get("default_format") or "TabSeparated"
            try:
                if data:
                    statement, data_fmt = split_format(sql)
                    if data_fmt:
                        engine.insert(statement, data_fmt, data, database=database)
                    else:  # INSERT ... VALUES with the rows in the body
                        engine.execute(sql + " " + data.decode("utf-8", "replace"), fmt, query_params, database)
                    out = b""
                else:
                    fmt = split_format(sql)[1] or fmt
                    # Anonymous readers of a token-guarded endpoint get a readonly=1 session.
                    out = engine.execute(sql, fmt, query_params, database, readonly=not trusted)
            except EngineQueryError as exc:
                message = str(exc)
                status = 404 if "UNKNOWN_TABLE" in message or "UNKNOWN_DATABASE" in message else (
                    400 if "SYNTAX_ERROR" in message or "Code: 62." in message else 500)
                return self._error(status, message)
            summary = json.dumps({"read_rows": "0", "read_bytes": "0", "written_rows": "0",
                                  "written_bytes": "0", "total_rows_to_read": "0", "result_rows": "0",
                                  "result_bytes": str(len(out))})
            self.send_body(200, out, _CONTENT_TYPES.get(fmt, "text/tab-separated-values; charset=UTF-8"), {
                "X-ClickHouse-Format": fmt,
                "X-ClickHouse-Timezone": "UTC",
                "X-ClickHouse-Query-Id": params.get("query_id") or str(uuid.uuid4()),
                "X-ClickHouse-Server-Display-Name": "tracerl-collector",
                "X-ClickHouse-Summary": summary,
            })

    QueryHandler.max_body_bytes = max_body_bytes
    return QueryHandler


def start_query_endpoint(engine: EmbeddedEngine, host: str, port: int, token: str = "",
                         max_body_bytes: int = 256 << 20) -> Server:
    return Server((host, port), make_handler(engine, token, max_body_bytes))
