"""Every kind of bad input gets a clear error, and the collector keeps serving: each case is
followed by a good export that succeeds."""

import json
import secrets
import select
import socket
import time

import grpc
import pytest
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from opentelemetry.sdk.trace.export import SpanExportResult

from tests.otlp_send import exporter, post, recording_provider

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def request_bytes(trace_id=None, span_id=None, parent=b"", name="s") -> bytes:
    span = Span(trace_id=secrets.token_bytes(16) if trace_id is None else trace_id,
                span_id=secrets.token_bytes(8) if span_id is None else span_id,
                parent_span_id=parent, name=name, start_time_unix_nano=1, end_time_unix_nano=2)
    return ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])]).SerializeToString()


def grpc_export(collector, body: bytes, metadata=None):
    """Send raw bytes to TraceService/Export; returns the grpc status code."""
    with grpc.insecure_channel(collector.grpc_endpoint) as channel:
        call = channel.unary_unary(EXPORT, request_serializer=None, response_deserializer=None)
        try:
            call(body, timeout=10, metadata=metadata)
        except grpc.RpcError as err:
            return err.code(), err.details()
        return grpc.StatusCode.OK, ""


def good_export_succeeds(collector, kind="http", **kwargs) -> None:
    service = f"good-{secrets.token_hex(4)}"
    provider, memory = recording_provider(service)
    with provider.get_tracer("t").start_as_current_span("after-bad-input"):
        pass
    assert exporter(kind, collector, **kwargs).export(memory.get_finished_spans()) == SpanExportResult.SUCCESS
    assert collector.rows("SELECT count() AS n FROM otel_traces WHERE ServiceName = {s:String}", s=service) == [{"n": 1}]


def status_message(body: bytes) -> str:
    status = status_pb2.Status()
    status.ParseFromString(body)
    return status.message


@pytest.mark.parametrize("body,content_type,expect", [
    (b"\xff\xff\xff\x0f garbage", "application/x-protobuf", "malformed protobuf"),
    (b'{"resourceSpans": [', "application/json", "malformed JSON"),
    (b'[1, 2]', "application/json", "must be a JSON object"),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "00f067aa0ba902b7"}]}]}]}',
     "application/json", "is not hex"),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "0af7", "spanId": "00f067aa0ba902b7"}]}]}]}',
     "application/json", "32 hex digits"),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "0af7651916cd43dd8448eb211c80319c", '
     b'"spanId": "00f067aa0ba902b7", "startTimeUnixNano": "soon"}]}]}]}', "application/json", "malformed OTLP/JSON"),
    (request_bytes(trace_id=b"\x01" * 5), "application/x-protobuf", "trace_id must be 16 bytes"),
    (request_bytes(span_id=b"\x00" * 8), "application/x-protobuf", "span_id must be 8 bytes and not all zero"),
    (request_bytes(parent=b"\x01\x02"), "application/x-protobuf", "parent_span_id must be 8 bytes"),
    (ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[Span(
        trace_id=b"\x01" * 16, span_id=b"\x01" * 8, start_time_unix_nano=2**64 - 1)])])]).SerializeToString(),
     "application/x-protobuf", "past the end of DateTime64(9)"),
])
def test_http_bad_payload_is_400(collector, body, content_type, expect):
    status, headers, reply = post(collector.http_endpoint, body, content_type)
    assert status == 400
    message = json.loads(reply)["message"] if content_type == "application/json" else status_message(reply)
    assert expect in message
    good_export_succeeds(collector)


def test_invalid_ids_reject_the_whole_request(collector):
    """A request is accepted whole or not at all: its valid spans are not stored either."""
    tid = secrets.token_bytes(16)
    good = Span(trace_id=tid, span_id=secrets.token_bytes(8), name="valid", start_time_unix_nano=1, end_time_unix_nano=2)
    bad = Span(trace_id=tid, span_id=b"\x00" * 8, name="invalid", start_time_unix_nano=1, end_time_unix_nano=2)
    body = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[good, bad])])]).SerializeToString()
    assert post(collector.http_endpoint, body)[0] == 400
    assert collector.rows("SELECT count() AS n FROM otel_traces WHERE TraceId = {t:String}", t=tid.hex()) == [{"n": 0}]


def test_wrong_content_type_is_415(collector):
    status, _, reply = post(collector.http_endpoint, request_bytes(), "text/plain")
    assert status == 415 and "unsupported Content-Type 'text/plain'" in status_message(reply)
    good_export_succeeds(collector)


def test_bad_gzip_is_400(collector):
    status, _, reply = post(collector.http_endpoint, b"not gzip at all", headers={"Content-Encoding": "gzip"})
    assert status == 400 and "does not decode as gzip" in status_message(reply)
    good_export_succeeds(collector)


def test_gzip_protobuf_body_is_accepted(collector):
    tid = secrets.token_bytes(16)
    assert post(collector.http_endpoint, request_bytes(trace_id=tid), gzip_body=True)[0] == 200
    assert collector.rows("SELECT count() AS n FROM otel_traces WHERE TraceId = {t:String}", t=tid.hex()) == [{"n": 1}]


def test_unknown_path_is_404(collector):
    assert post(collector.http_endpoint.replace("/v1/traces", "/v1/metrics"), request_bytes())[0] == 404
    good_export_succeeds(collector)


def test_grpc_bad_payloads_are_invalid_argument(collector):
    code, details = grpc_export(collector, b"\xff\xff\xff\x0f garbage")
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "malformed protobuf" in details
    code, details = grpc_export(collector, request_bytes(trace_id=b"\x00" * 16))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "trace_id must be 16 bytes" in details
    good_export_succeeds(collector, "grpc")


def test_oversized_payload_is_413_and_resource_exhausted(make_collector):
    collector = make_collector("--max-body-mb", "0.01")  # 10 KiB
    big = request_bytes(name="x" * 20_000)
    status, _, reply = post(collector.http_endpoint, big)
    assert status == 413 and "over the limit" in status_message(reply)
    # A small gzip body that inflates past the limit is caught too.
    status, _, reply = post(collector.http_endpoint, big, gzip_body=True)
    assert status == 413 and "decompressed body is over the limit" in status_message(reply)
    code, _ = grpc_export(collector, big)
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    good_export_succeeds(collector, "http")
    good_export_succeeds(collector, "grpc")


def test_token_is_required_when_configured(make_collector):
    collector = make_collector("--token", "s3cret")
    status, _, reply = post(collector.http_endpoint, request_bytes())
    assert status == 401 and "bearer token" in status_message(reply)
    assert post(collector.http_endpoint, request_bytes(), headers={"Authorization": "Bearer wrong"})[0] == 401
    assert grpc_export(collector, request_bytes())[0] == grpc.StatusCode.UNAUTHENTICATED
    assert grpc_export(collector, request_bytes(), metadata=[("authorization", "Bearer s3cret")])[0] == grpc.StatusCode.OK
    good_export_succeeds(collector, "http", headers={"Authorization": "Bearer s3cret"})
    good_export_succeeds(collector, "grpc", headers={"authorization": "Bearer s3cret"})


def hold_a_slot(port: int) -> socket.socket:
    """A client that announces a body and sends only part of it: once admitted, it holds an
    in-flight slot until the socket closes."""
    stuck = socket.create_connection(("127.0.0.1", port))
    stuck.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
                  b"Content-Length: 1000\r\n\r\n" + b"\x0a" * 10)
    return stuck


def test_too_many_in_flight_is_429_with_retry_after(make_collector):
    collector = make_collector("--max-inflight", "1")
    stuck = hold_a_slot(collector.http_port)
    try:
        deadline = time.monotonic() + 60
        while True:  # until the stuck request holds the only slot
            status, headers, reply = post(collector.http_endpoint, request_bytes())
            if status == 429 or time.monotonic() > deadline:
                break
            if select.select([stuck], [], [], 0)[0]:
                # It arrived while a good export held the slot and was refused: hold again.
                stuck.close()
                stuck = hold_a_slot(collector.http_port)
            time.sleep(0.05)
        assert status == 429 and headers["Retry-After"] == "1", (status, reply, collector.log())
        assert "too many exports in flight" in status_message(reply)
        code, details = grpc_export(collector, request_bytes())
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "in flight" in details
    finally:
        stuck.close()  # the held request ends (short body -> 400) and frees its slot
    deadline = time.monotonic() + 60
    while post(collector.http_endpoint, request_bytes())[0] == 429 and time.monotonic() < deadline:
        time.sleep(0.05)
    good_export_succeeds(collector, "http")
    good_export_succeeds(collector, "grpc")


def test_store_failure_is_503_and_unavailable_then_recovers(make_collector):
    collector = make_collector()
    admin = collector.client()
    admin.command("RENAME TABLE otel_traces TO otel_traces_away")
    try:
        status, headers, reply = post(collector.http_endpoint, request_bytes())
        assert status == 503 and headers["Retry-After"] == "1"
        assert "store unavailable" in status_message(reply) and "otel_traces" in status_message(reply)
        code, details = grpc_export(collector, request_bytes())
        assert code == grpc.StatusCode.UNAVAILABLE and "store unavailable" in details
    finally:
        admin.command("RENAME TABLE otel_traces_away TO otel_traces")
    good_export_succeeds(collector, "http")
    good_export_succeeds(collector, "grpc")
    assert collector.proc.poll() is None
