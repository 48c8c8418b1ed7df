"""The named queries of the transition builder and `tracerl reward`, from `sql/*.sql`.

Callers pass values as query parameters (``{trace_ids:Array(String)}``); only identifiers and
the builder's selection clauses are placed into the text here, so the dialect stays in store/.
"""

from __future__ import annotations

from string import Template

from .schema import DEFAULT_DATABASE, DEFAULT_TRACES_TABLE, check_identifier, load_sql


def named_query(name: str, database: str = DEFAULT_DATABASE, traces_table: str = DEFAULT_TRACES_TABLE,
                **clauses: str) -> str:
    """The text of ``sql/<name>.sql`` for ``database`` and ``traces_table``."""
    values = {"database": check_identifier(database, "database"),
              "table": check_identifier(traces_table, "table"), **clauses}
    return Template(load_sql(name + ".sql")).substitute(values)


def candidates_query(database: str = DEFAULT_DATABASE, *, since_seconds: float | None = None,
                     where: str | None = None, trace_ids: bool = False, include_built: bool = False) -> str:
    """The rollouts a build selects: by ``{trace_ids:Array(String)}`` when ``trace_ids``, started
    in the last ``since_seconds``, matching ``where`` (a condition on `tracerl_rollouts` columns,
    written by the user), and not yet built unless ``include_built``."""
    conditions = ["1"]
    if trace_ids:
        conditions.append("trace_id IN {trace_ids:Array(String)}")
    if since_seconds is not None:
        conditions.append(f"start_time >= now64(9) - toIntervalMillisecond({int(since_seconds * 1000)})")
    if where:
        conditions.append(f"({where})")
    built = "" if include_built else (
        f"AND trace_id NOT IN (SELECT trace_id FROM `{check_identifier(database, 'database')}`.`tracerl_builds` FINAL"
        " WHERE status = 'built')")
    return named_query("builder_candidates", database, conditions=" AND ".join(conditions), built_filter=built)


def duration_seconds(text: str) -> float:
    """``"90s"``, ``"15m"``, ``"2h"``, ``"7d"`` -> seconds (the builder's ``--since``)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = text.strip()
    if len(text) < 2 or text[-1] not in units:
        raise ValueError(f"duration {text!r}: expected a number and a unit s, m, h or d (e.g. 2h)")
    try:
        return float(text[:-1]) * units[text[-1]]
    except ValueError:
        raise ValueError(f"duration {text!r}: expected a number and a unit s, m, h or d (e.g. 2h)") from None
