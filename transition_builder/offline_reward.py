"""Rewards supplied after the fact: `tracerl reward TRACE_ID VALUE` writes a reward span into the
trace, so an offline verifier can score a production trace (or rescore a rollout).

The span is a child of the rollout root (or the trace's top span), timestamped now: the latest
reward named ``reward`` is a rollout's final reward, so the verdict given afterwards wins. It is
marked ``tracerl.reward.source = offline`` and written as a row of the traces table, the way the
collector writes spans, through whatever store client `tracerl sql` would use.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timezone

from tracerl import __version__, semconv

ROW_COLUMNS = ("Timestamp", "TraceId", "SpanId", "ParentSpanId", "TraceState", "SpanName", "SpanKind",
               "ServiceName", "ResourceAttributes", "ScopeName", "ScopeVersion", "SpanAttributes", "Duration",
               "StatusCode", "StatusMessage")


class TraceNotFound(LookupError):
    pass


def _format_number(value: float) -> str:
    """As pdata's AsString writes a double: ``1``, ``0.25``."""
    return repr(float(value)).removesuffix(".0") if float(value).is_integer() else repr(float(value))


def write_reward(client, trace_id: str, value: float, name: str = semconv.REWARD_PRIMARY,
                 components: dict | None = None, database: str | None = None,
                 traces_table: str = "otel_traces") -> str:
    """Insert the reward span; returns its span id. Raises `TraceNotFound` for an unknown trace."""
    from tracerl.store.queries import named_query

    database = database or client.database or "default"
    anchor = client.query(named_query("reward_anchor_span", database, traces_table),
                          parameters={"trace_id": trace_id}).result_rows
    if not anchor:
        raise TraceNotFound(f"no span of trace {trace_id} in {database}.{traces_table}")
    parent_id, service, resource = anchor[0]
    attrs = {semconv.REWARD_VALUE: _format_number(value), semconv.REWARD_NAME: name,
             semconv.REWARD_SOURCE: semconv.REWARD_SOURCE_OFFLINE}
    for key, component in (components or {}).items():
        attrs[semconv.reward_component(key)] = _format_number(component)
    span_id = secrets.token_hex(8)
    row = (datetime.now(timezone.utc), trace_id, span_id, parent_id, "", semconv.SPAN_REWARD, "Internal",
           service, {**resource, "service.name": service}, semconv.SCOPE_SDK, __version__, attrs, 0, "Unset", "")
    client.insert(traces_table, [row], column_names=list(ROW_COLUMNS), database=database)
    return span_id
