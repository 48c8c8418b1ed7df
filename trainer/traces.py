"""Waiting until the rollouts of a step are complete in the store.

A rollout is complete when its root span is stored (the trainer ends the root only after the
agent finished, and spans are exported when they end) and then no new span of its trace
arrived for ``quiet_s`` (the agent's last exports landing). A rollout not complete after
``timeout_s`` is given up on: marked failed instead of holding the step.
"""

from __future__ import annotations

import time

from tracerl.store.trainer import trace_status_query


def wait_for_traces(client, trace_ids: list[str], *, quiet_s: float = 0.5, timeout_s: float = 60.0,
                    poll_s: float = 0.2, database: str = "default", traces_table: str = "otel_traces") -> dict:
    """trace id -> True (complete) or False (timed out)."""
    query = trace_status_query(database, traces_table)
    pending = set(trace_ids)
    done: dict[str, bool] = {}
    seen: dict[str, tuple[int, float]] = {}  # trace -> (span count, when it last changed)
    deadline = time.monotonic() + timeout_s
    while pending:
        now = time.monotonic()
        rows = client.query(query, parameters={"trace_ids": sorted(pending)}).result_rows
        for trace_id, has_root, spans in rows:
            count, since = seen.get(trace_id, (-1, now))
            if spans != count:
                seen[trace_id] = (spans, now)
            elif has_root and now - since >= quiet_s:
                done[trace_id] = True
                pending.discard(trace_id)
        if not pending:
            break
        if now >= deadline:
            for trace_id in pending:
                done[trace_id] = False
            break
        time.sleep(poll_s)
    return done
