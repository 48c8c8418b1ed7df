"""Spans as the builder reads them from `otel_traces`, grouped by trace and de-duplicated.

OTLP exporters retry an export whose answer they did not get, so the same span (same SpanId)
can be stored twice; every later step assumes one row per span, so duplicates go here.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str  # '' for a root; may name a span that never arrived (an orphan)
    name: str
    start_ns: int
    duration_ns: int
    status: str = "Unset"
    service: str = ""
    resource: dict = field(default_factory=dict)  # tracerl.* resource attributes only
    attrs: dict = field(default_factory=dict)

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns


@dataclass(slots=True)
class TraceSpans:
    """The spans of one trace, one per SpanId, and how many duplicate rows were dropped."""

    trace_id: str
    spans: list[Span]
    duplicates: int = 0


SPAN_COLUMNS = ("TraceId", "SpanId", "ParentSpanId", "SpanName", "StartNs", "Duration", "StatusCode",
                "ServiceName", "ResourceAttributes", "SpanAttributes")


def group_rows(rows) -> dict[str, TraceSpans]:
    """Rows in `SPAN_COLUMNS` order -> spans per trace id, keeping the first row of each SpanId."""
    traces: dict[str, TraceSpans] = {}
    seen: dict[str, set] = {}
    for trace_id, span_id, parent_id, name, start_ns, duration, status, service, resource, attrs in rows:
        group = traces.get(trace_id)
        if group is None:
            group = traces[trace_id] = TraceSpans(trace_id, [])
            seen[trace_id] = set()
        ids = seen[trace_id]
        if span_id in ids:
            group.duplicates += 1
            continue
        ids.add(span_id)
        group.spans.append(Span(trace_id, span_id, parent_id, name, int(start_ns), int(duration), status,
                                service, resource, attrs))
    return traces
