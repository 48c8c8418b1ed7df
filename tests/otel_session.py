"""The pytest process's own tracing: tracerl's SDK set up once, exporting to the shared collector.

A process has one global tracer provider, so in-process tests share this one; they keep their
data apart by opening their own `tracerl.rollout` and querying its trace id. Redaction is set to
the default secrets plus e-mail addresses and one custom regex, so the redaction tests can see
all three kinds.
"""

from __future__ import annotations

import os

import pytest
from opentelemetry import trace

REDACT = "secrets,email,re:ticket-[0-9]{4}"


class Traced:
    def __init__(self, collector):
        self.collector = collector

    def flush(self) -> None:
        trace.get_tracer_provider().force_flush()

    def spans(self, trace_id: str) -> list[dict]:
        self.flush()
        return self.collector.rows(
            "SELECT SpanName, SpanKind, SpanId, ParentSpanId, StatusCode, StatusMessage, SpanAttributes,"
            " `Events.Name` AS event_names, `Events.Attributes` AS event_attributes, ResourceAttributes"
            " FROM otel_traces WHERE TraceId = {tid:String} ORDER BY Timestamp", tid=trace_id)


@pytest.fixture(scope="session")
def traced(collector):
    from tracerl import setup

    os.environ.setdefault("OTEL_BSP_SCHEDULE_DELAY", "100")
    setup.configure_sdk(endpoint=collector.grpc_endpoint, service_name="tracerl-pytest", redact=REDACT,
                        trace_exporter_names=["otlp"])
    setup.activate_instrumentors()
    return Traced(collector)
