"""The store's schema, from the `.sql` files beside this module.

Creation is idempotent (every statement is ``IF NOT EXISTS``). Database and table names are
configurable like the contrib exporter's (``database``, ``traces_table_name``); the TTL is
optional, as there.
"""

from __future__ import annotations

import re
from importlib.resources import files
from string import Template
from typing import Callable

DEFAULT_DATABASE = "default"
DEFAULT_TRACES_TABLE = "otel_traces"
SCHEMA_FILES = (
    "create_database.sql",
    "otel_traces.sql",
    "otel_traces_trace_id_ts.sql",
    "otel_traces_trace_id_ts_mv.sql",
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TTL = re.compile(r"^(\d+)\s*([smhd])$")
_TTL_UNITS = {"s": "Second", "m": "Minute", "h": "Hour", "d": "Day"}


def load_sql(name: str) -> str:
    """The text of ``store/sql/<name>``."""
    return files("tracerl.store").joinpath("sql", name).read_text()


def check_identifier(name: str, what: str) -> str:
    if not _IDENT.match(name):
        raise ValueError(f"{what} {name!r} is not a plain identifier (letters, digits, underscore)")
    return name


def ttl_interval(ttl: str) -> str:
    """``"72h"`` -> ``toIntervalHour(72)``; units s, m, h, d."""
    m = _TTL.match(ttl.strip())
    if not m:
        raise ValueError(f"TTL {ttl!r}: expected a number and a unit s, m, h or d (e.g. 72h, 30d)")
    return f"toInterval{_TTL_UNITS[m.group(2)]}({int(m.group(1))})"


def schema_statements(
    database: str = DEFAULT_DATABASE, table: str = DEFAULT_TRACES_TABLE, ttl: str | None = None
) -> list[str]:
    """The DDL statements, in order, for the traces table, its lookup table and view."""
    check_identifier(database, "database")
    check_identifier(table, "table")
    interval = ttl_interval(ttl) if ttl else None
    values = {
        "database": database,
        "table": table,
        "engine": "MergeTree",
        "ttl_clause": f"TTL toDateTime(Timestamp) + {interval}" if interval else "",
        "ttl_start_clause": f"TTL toDateTime(Start) + {interval}" if interval else "",
    }
    return [Template(load_sql(name)).substitute(values) for name in SCHEMA_FILES]


TRACERL_SCHEMA_FILES = (
    "tracerl_transitions.sql",
    "tracerl_builds.sql",
    "tracerl_llm_calls.sql",  # before tracerl_rollouts, which reads it
    "tracerl_rewards.sql",
    "tracerl_rollouts.sql",
)


def tracerl_schema_statements(database: str = DEFAULT_DATABASE, traces_table: str = DEFAULT_TRACES_TABLE) -> list[str]:
    """DDL for tracerl's own objects over a traces table: the builder's tables
    (``tracerl_transitions``, ``tracerl_builds``) and the debugging views (``tracerl_llm_calls``,
    ``tracerl_rewards``, ``tracerl_rollouts``)."""
    values = {"database": check_identifier(database, "database"),
              "table": check_identifier(traces_table, "table")}
    return [Template(load_sql(name)).substitute(values) for name in TRACERL_SCHEMA_FILES]


def ensure_tracerl_schema(
    execute: Callable[[str], object],
    database: str = DEFAULT_DATABASE,
    traces_table: str = DEFAULT_TRACES_TABLE,
) -> None:
    """Create tracerl's tables and views where missing (idempotent, ``IF NOT EXISTS``)."""
    for statement in tracerl_schema_statements(database, traces_table):
        execute(statement)


def ensure_schema(
    execute: Callable[[str], object],
    database: str = DEFAULT_DATABASE,
    table: str = DEFAULT_TRACES_TABLE,
    ttl: str | None = None,
) -> None:
    """Create whatever is missing; ``execute`` runs one statement (engine.execute, client.command)."""
    for statement in schema_statements(database, table, ttl):
        execute(statement)
