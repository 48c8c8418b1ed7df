"""tracerl's store: ClickHouse (embedded chdb or a server), its schema and its clients.

This package is the only place that knows SQL dialect details; the schema lives in ``sql/``.
"""

from .client import connect
from .dsn import StoreDSN, StoreError, resolve_dsn
from .schema import (DEFAULT_DATABASE, DEFAULT_TRACES_TABLE, ensure_schema, ensure_tracerl_schema, schema_statements,
                     tracerl_schema_statements)

__all__ = [
    "DEFAULT_DATABASE",
    "DEFAULT_TRACES_TABLE",
    "StoreDSN",
    "StoreError",
    "connect",
    "ensure_schema",
    "ensure_tracerl_schema",
    "resolve_dsn",
    "schema_statements",
    "tracerl_schema_statements",
]
