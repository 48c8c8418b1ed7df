"""Helpers to send spans through the OpenTelemetry SDK's own OTLP exporters."""

from __future__ import annotations

import gzip
import urllib.error
import urllib.request

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def exporter(kind: str, collector, **kwargs):
    if kind == "grpc":
        return GrpcExporter(endpoint=collector.grpc_endpoint, insecure=True, timeout=10, **kwargs)
    return HttpExporter(endpoint=collector.http_endpoint, timeout=10, **kwargs)


def recording_provider(service: str, **resource):
    """A tracer provider whose finished spans stay in memory, to be exported by hand."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service, **resource}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def post(url: str, body: bytes, content_type: str = "application/x-protobuf", headers: dict | None = None,
         gzip_body: bool = False) -> tuple[int, dict, bytes]:
    """POST raw bytes; returns (status, headers, body) for success and error statuses alike."""
    hdrs = {"Content-Type": content_type, **(headers or {})}
    if gzip_body:
        body = gzip.compress(body)
        hdrs["Content-Encoding"] = "gzip"
    request = urllib.request.Request(url, data=body, headers=hdrs, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=15) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
