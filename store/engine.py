"""Raw SQL execution for the process that owns a store: the collector.

The collector needs two things from its store: insert pre-serialized rows fast, and (for an
embedded store) answer arbitrary ClickHouse SQL in any output format for its query endpoint.
Both kinds of store give that here: chdb through its native connections, a ClickHouse server
through clickhouse-connect's HTTP client.
"""

from __future__ import annotations

import os
import threading
from typing import Protocol

from .dsn import StoreDSN, StoreError


class Engine(Protocol):
    dsn: StoreDSN

    def execute(self, sql: str, fmt: str = "TabSeparated", params: dict[str, str] | None = None,
                database: str | None = None) -> bytes: ...

    def insert(self, statement: str, fmt: str, data: bytes, database: str | None = None) -> None: ...

    def close(self) -> None: ...


class EngineQueryError(Exception):
    """ClickHouse rejected a statement; the message is ClickHouse's own (``Code: N. DB::Exception``)."""


class EmbeddedEngine:
    """chdb in this process. One chdb connection per thread, so queries from the query endpoint
    and inserts from the writer run side by side in the engine (chdb releases the GIL).

    ``execute(..., readonly=True)`` runs on connections opened with ClickHouse's ``readonly=1``:
    no writes, no DDL, no settings changes and no table functions (``file()``, ``url()``), for
    callers that are not trusted with more."""

    def __init__(self, dsn: StoreDSN):
        import chdb  # the collector extra

        self.dsn = dsn
        self._chdb = chdb
        self._local = threading.local()
        self._all: list = []
        self._lock = threading.Lock()
        os.makedirs(dsn.path, exist_ok=True)
        try:
            self._connection()
        except Exception as exc:  # noqa: BLE001 - chdb raises plain RuntimeErrors
            raise StoreError(
                f"store {dsn}: cannot open the embedded store ({exc}). chdb lets one process open a "
                "path; is another process (a collector, a notebook) holding it?"
            ) from exc

    def _connection(self, readonly: bool = False):
        key = "ro" if readonly else "rw"
        conn = getattr(self._local, key, None)
        if conn is None:
            conn = self._chdb.connect(self.dsn.path + ("?readonly=1" if readonly else ""))
            setattr(self._local, key, conn)
            setattr(self._local, key + "_database", None)
            with self._lock:
                self._all.append(conn)
        return conn

    def _use(self, conn, database: str | None, readonly: bool = False) -> None:
        database = database or self.dsn.database
        key = ("ro" if readonly else "rw") + "_database"
        if getattr(self._local, key) != database:
            conn.query(f"USE `{database}`")
            setattr(self._local, key, database)

    def execute(self, sql, fmt="TabSeparated", params=None, database=None, readonly=False) -> bytes:
        conn = self._connection(readonly)
        try:
            self._use(conn, database, readonly)
            result = conn.query(sql, fmt, params=params or None)
        except Exception as exc:  # noqa: BLE001
            raise EngineQueryError(str(exc)) from None
        return result.bytes() if hasattr(result, "bytes") else bytes(result or b"")

    def insert(self, statement, fmt, data, database=None) -> None:
        conn = self._connection()
        try:
            self._use(conn, database)
            with conn.send_insert(statement, fmt) as inserter:
                inserter.append(data)
                inserter.finish()
        except Exception as exc:  # noqa: BLE001
            raise EngineQueryError(str(exc).removeprefix("Streaming insert finish failed: ")) from None

    def close(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass


class ServerEngine:
    """A ClickHouse server over HTTP, through clickhouse-connect."""

    def __init__(self, dsn: StoreDSN, **client_kwargs):
        import clickhouse_connect

        self.dsn = dsn
        try:
            self._client = clickhouse_connect.get_client(
                host=dsn.host, port=dsn.port, username=dsn.username, password=dsn.password,
                secure=dsn.secure, **client_kwargs,  # no database: it may not exist yet; SQL names it
            )
        except Exception as exc:  # noqa: BLE001
            raise StoreError(f"store {dsn}: cannot connect ({exc})") from exc
        self._lock = threading.Lock()  # one HTTP session: keep its calls in turn

    def execute(self, sql, fmt="TabSeparated", params=None, database=None) -> bytes:
        try:
            with self._lock:
                return self._client.raw_query(sql, parameters=params, fmt=fmt)
        except Exception as exc:  # noqa: BLE001
            raise EngineQueryError(str(exc)) from None

    def insert(self, statement, fmt, data, database=None) -> None:
        try:
            with self._lock:
                self._client.command(f"{statement} FORMAT {fmt}", data=data)
        except Exception as exc:  # noqa: BLE001
            raise EngineQueryError(str(exc)) from None

    def close(self) -> None:
        self._client.close()


def open_engine(dsn: StoreDSN) -> Engine:
    """Open ``dsn`` for ownership: chdb in-process, or a server over HTTP."""
    return EmbeddedEngine(dsn) if dsn.embedded else ServerEngine(dsn)
