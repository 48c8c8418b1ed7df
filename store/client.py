"""clickhouse-connect clients for readers and writers that do not own the store.

``tracerl sql``, the transition builder and the trainer call :func:`connect`. For an embedded
store owned by a running collector it returns an HTTP client for the collector's query endpoint;
for an embedded store nobody holds it opens the path in-process (chdb backend); for a server DSN
it connects to the server. One client API either way.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from .dsn import StoreDSN, StoreError, resolve_dsn
from .owner import read_owner

TOKEN_ENV = "TRACERL_TOKEN"


def connect(dsn: str | StoreDSN | None = None, token: str | None = None, **client_kwargs):
    """A clickhouse-connect client for the store at ``dsn`` (default: ``$TRACERL_STORE`` or
    ``./.tracerl/store``). ``token`` (default ``$TRACERL_TOKEN``) authenticates to a collector's
    query endpoint that requires one."""
    import clickhouse_connect

    target = dsn if isinstance(dsn, StoreDSN) else resolve_dsn(dsn)
    token = token or os.environ.get(TOKEN_ENV) or ""
    if target.embedded:
        owner = read_owner(target.path)
        if owner is not None and owner.query_url and owner.pid != os.getpid():
            url = urlsplit(owner.query_url)
            try:
                return clickhouse_connect.get_client(
                    host=url.hostname, port=url.port, username="default", password=token,
                    database=target.database, **client_kwargs,
                )
            except Exception as exc:  # noqa: BLE001
                raise StoreError(
                    f"store {target}: its owner (pid {owner.pid}) serves queries at {owner.query_url}, "
                    f"but connecting failed: {exc}"
                ) from exc
        if owner is not None and owner.pid != os.getpid():
            raise StoreError(f"store {target}: held by pid {owner.pid}, which serves no query endpoint")
        if not os.path.isdir(target.path):
            raise StoreError(f"store {target}: no such folder (start `tracerl collector` to create it)")
        try:
            return clickhouse_connect.get_client(dsn=f"chdb://{target.path}", database=target.database,
                                                 **client_kwargs)
        except Exception as exc:  # noqa: BLE001
            raise StoreError(
                f"store {target}: cannot open the embedded store ({exc}); another process may hold it"
            ) from exc
    try:
        return clickhouse_connect.get_client(
            host=target.host, port=target.port, username=target.username, password=target.password,
            database=target.database, secure=target.secure, **client_kwargs,
        )
    except Exception as exc:  # noqa: BLE001
        raise StoreError(f"store {target}: cannot connect ({exc})") from exc
