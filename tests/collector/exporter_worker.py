"""An exporter process for the durability tests: sends batches of spans through the OTel SDK's
own OTLP exporter until told to stop, and appends the span ids of every batch the collector
acknowledged to a file (flushed before the next send)."""

import sys
import time

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def main(kind: str, endpoint: str, acked_path: str, stop_path: str, service: str) -> None:
    exporter = (GrpcExporter(endpoint=endpoint, insecure=True, timeout=2) if kind == "grpc"
                else HttpExporter(endpoint=endpoint, timeout=2))
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("durability")
    import os

    with open(acked_path, "a") as acked:
        while not os.path.exists(stop_path):
            memory.clear()
            for i in range(50):
                with tracer.start_as_current_span(f"span-{i}") as span:
                    span.set_attribute("i", i)
            spans = memory.get_finished_spans()
            try:
                result = exporter.export(spans)
            except Exception:  # noqa: BLE001 - a dead collector may surface as an exception
                result = SpanExportResult.FAILURE
            if result == SpanExportResult.SUCCESS:
                acked.write("".join(f"{s.context.span_id:016x}\n" for s in spans))
                acked.flush()
            else:
                time.sleep(0.05)


if __name__ == "__main__":
    main(*sys.argv[1:])
