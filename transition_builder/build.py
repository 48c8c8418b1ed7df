"""The build: select rollouts, load their spans in batches, reconstruct, write transitions.

`build()` is the Python API the trainer calls and `tracerl build` prints; both return the same
`Transition` records that go to `tracerl_transitions`.
"""

from __future__ import annotations

import gc
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone

from . import export, skips
from .aggregate import AGGREGATIONS
from .credit import STRATEGIES
from .rollout import reconstruct
from .spans import group_rows
from .transitions import Transition, to_transitions

BATCH_TRACES = 2000  # traces per span query: few queries, bounded memory


@dataclass
class BuildReport:
    traces_read: int = 0
    built: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason -> traces
    transitions_written: int = 0
    already_built: int = 0  # selected by --trace but built before (use --rebuild)
    not_found: int = 0  # selected by --trace but not a rollout in the store
    duplicate_spans: int = 0
    orphans_repaired: int = 0
    double_recorded: int = 0
    seconds: Counter = field(default_factory=Counter)  # select / read / reconstruct / write

    def summary(self) -> str:
        lines = [f"traces read: {self.traces_read}", f"built: {self.built}",
                 f"skipped: {sum(self.skipped.values())}"]
        lines += [f"  {reason}: {n}" for reason, n in sorted(self.skipped.items())]
        lines.append(f"transitions written: {self.transitions_written}")
        if self.already_built:
            lines.append(f"already built (use --rebuild): {self.already_built}")
        if self.not_found:
            lines.append(f"not found: {self.not_found}")
        repairs = (f"repairs: {self.duplicate_spans} duplicate spans dropped, {self.orphans_repaired} orphans "
                   f"re-attached, {self.double_recorded} double recordings dropped")
        timing = "time: " + ", ".join(f"{k} {v:.2f}s" for k, v in self.seconds.items())
        return "\n".join(lines + [repairs, timing])


@dataclass
class BuildResult:
    transitions: list[Transition]
    report: BuildReport


def build(client=None, *, store: str | None = None, token: str | None = None, database: str | None = None,
          traces_table: str = "otel_traces", traces: list[str] | None = None, since: str | float | None = None,
          where: str | None = None, agents: str | None = None, credit: str = "identical", gamma: float = 1.0,
          aggregate: str = "transition", tokenizer: str | None = None, rebuild: bool = False,
          write: bool = True, out: str | None = None, batch_traces: int = BATCH_TRACES) -> BuildResult:
    """Build the transitions of the selected rollouts (default: every finished rollout not yet
    built). ``client`` is a clickhouse-connect client; without one, ``store`` / ``token`` are
    resolved like `tracerl sql` does (the running collector's endpoint, or the store itself).
    ``write=False`` only returns the records; ``out`` also writes them to a .parquet/.jsonl file."""
    from tracerl.store import connect
    from tracerl.store.queries import candidates_query, duration_seconds, named_query

    if credit not in STRATEGIES:
        raise ValueError(f"unknown credit strategy {credit!r}; one of {sorted(STRATEGIES)}")
    if aggregate not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {aggregate!r}; one of {AGGREGATIONS}")
    agent_pattern = re.compile(agents) if agents else None
    since_s = duration_seconds(since) if isinstance(since, str) else since
    retokenizer = None
    if tokenizer:
        from .tokens import Retokenizer
        retokenizer = Retokenizer(tokenizer)
    client = client or connect(store, token=token)
    database = database or client.database or "default"

    report = BuildReport()
    clock = time.perf_counter()
    params = {"trace_ids": list(traces)} if traces else None
    selected = [row[0] for row in client.query(
        candidates_query(database, since_seconds=since_s, where=where, trace_ids=bool(traces), include_built=rebuild),
        parameters=params).result_rows]
    if traces and not rebuild:
        built_before = {row[0] for row in client.query(named_query("builder_built_traces", database),
                                                       parameters=params).result_rows}
        report.already_built = len(built_before)
        report.not_found = len(set(traces) - set(selected) - built_before)
    elif traces:
        report.not_found = len(set(traces) - set(selected))

    report.seconds["select"] = time.perf_counter() - clock
    built_at = datetime.now(timezone.utc)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the build makes millions of small objects and no cycles; collections only cost time
    try:
        plan = _Plan(database, traces_table, agent_pattern, retokenizer, credit, gamma, aggregate, rebuild, write,
                     batch_traces, built_at)
        everything = _build_batches(client, selected, report, plan)
    finally:
        if gc_was_enabled:
            gc.enable()
    if out:
        export.write_file(out, everything)
    return BuildResult(everything, report)


@dataclass
class _Plan:
    """What one build does to each batch of traces."""

    database: str
    traces_table: str
    agents: re.Pattern | None
    retokenizer: object
    credit: str
    gamma: float
    aggregate: str
    rebuild: bool
    write: bool
    batch_traces: int
    built_at: datetime


def _build_batches(client, selected: list[str], report: BuildReport, plan: _Plan) -> list[Transition]:
    from tracerl.store.queries import named_query

    database, batch_traces, built_at = plan.database, plan.batch_traces, plan.built_at
    span_query = named_query("builder_trace_spans", database, plan.traces_table)
    everything: list[Transition] = []
    for start in range(0, len(selected), batch_traces):
        batch = selected[start:start + batch_traces]
        clock = time.perf_counter()
        rows = client.query(span_query, parameters={"trace_ids": batch}).result_rows
        report.seconds["read"] += time.perf_counter() - clock
        clock = time.perf_counter()
        grouped = group_rows(rows)
        transitions, log = [], []
        for trace_id in batch:
            trace = grouped.get(trace_id)
            if trace is None:
                continue
            report.traces_read += 1
            status, reason, made, stats = "built", "", [], {"duplicate_spans": trace.duplicates}
            try:
                rollout = reconstruct(trace, plan.agents, plan.retokenizer)
                stats = rollout.stats
                made = to_transitions(rollout, credit=plan.credit, gamma=plan.gamma, how=plan.aggregate,
                                      built_at=built_at)
                report.built += 1
            except skips.Skip as skip:
                status, reason = "skipped", skip.reason
                report.skipped[skip.reason] += 1
            report.duplicate_spans += stats.get("duplicate_spans", 0)
            report.orphans_repaired += stats.get("orphans_repaired", 0)
            report.double_recorded += stats.get("double_recorded", 0)
            transitions += made
            log.append((trace_id, status, reason, len(made), stats.get("duplicate_spans", 0),
                        stats.get("orphans_repaired", 0), stats.get("double_recorded", 0), built_at))
        report.seconds["reconstruct"] += time.perf_counter() - clock
        clock = time.perf_counter()
        if plan.write:
            if plan.rebuild:
                client.command(named_query("builder_delete_transitions", database), parameters={"trace_ids": batch})
            export.write_table(client, transitions, database)
            export.write_build_log(client, log, database)
            report.transitions_written += len(transitions)
        report.seconds["write"] += time.perf_counter() - clock
        everything += transitions
    return everything
