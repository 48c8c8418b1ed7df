"""Store DSNs: where the ClickHouse data of tracerl lives.

Two kinds, both reached through clickhouse-connect:

- ``chdb:///abs/path`` — the embedded engine (chdb) in a local folder; the default is
  ``.tracerl/store`` under the working directory, overridable by ``TRACERL_STORE``.
- ``http(s)://[user:pass@]host:port[/db]`` — a ClickHouse server's HTTP interface.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

DEFAULT_STORE_DIR = os.path.join(".tracerl", "store")
STORE_ENV = "TRACERL_STORE"


class StoreError(RuntimeError):
    """A store could not be reached or used; the message names the DSN and what failed."""


@dataclass(frozen=True)
class StoreDSN:
    kind: str  # "chdb" or "http"
    path: str = ""  # absolute folder of an embedded store
    host: str = ""
    port: int = 0
    secure: bool = False
    username: str = "default"
    password: str = ""
    database: str = "default"
    raw: str = ""

    @property
    def embedded(self) -> bool:
        return self.kind == "chdb"

    def __str__(self) -> str:
        if self.embedded:
            return f"chdb://{self.path}"
        scheme = "https" if self.secure else "http"
        return f"{scheme}://{self.host}:{self.port}/{self.database}"


def resolve_dsn(dsn: str | None = None) -> StoreDSN:
    """Parse ``dsn``, falling back to ``$TRACERL_STORE`` and then to ``./.tracerl/store``."""
    raw = dsn or os.environ.get(STORE_ENV) or ""
    if not raw:
        return StoreDSN(kind="chdb", path=os.path.abspath(DEFAULT_STORE_DIR), raw=DEFAULT_STORE_DIR)
    if raw.startswith("chdb:"):
        rest = raw[len("chdb:"):]
        if rest.startswith("//"):
            rest = rest[2:]
        path, _, query = rest.partition("?")
        if not path:
            raise StoreError(f"store DSN {raw!r}: no path (expected chdb:///abs/path)")
        database = parse_qs(query).get("database", ["default"])[0]
        return StoreDSN(kind="chdb", path=os.path.abspath(unquote(path)), database=database, raw=raw)
    if raw.startswith(("http://", "https://")):
        parts = urlsplit(raw)
        if not parts.hostname:
            raise StoreError(f"store DSN {raw!r}: no host (expected http(s)://[user:pass@]host:port[/db])")
        secure = parts.scheme == "https"
        try:
            port = parts.port or (8443 if secure else 8123)
        except ValueError as exc:
            raise StoreError(f"store DSN {raw!r}: bad port ({exc})") from None
        database = parts.path.strip("/") or "default"
        return StoreDSN(
            kind="http", host=parts.hostname, port=port, secure=secure,
            username=unquote(parts.username or "default"), password=unquote(parts.password or ""),
            database=database, raw=raw,
        )
    if "://" in raw:
        raise StoreError(f"store DSN {raw!r}: unknown scheme (use chdb:///path or http(s)://host:port/db)")
    # A bare filesystem path is an embedded store.
    return StoreDSN(kind="chdb", path=os.path.abspath(raw), raw=raw)
