"""Spans from the OpenTelemetry SDK's own exporters land in otel_traces field by field, the way
the contrib ClickHouse exporter writes them."""

import json
import secrets

import pytest
from opentelemetry.exporter.otlp.proto.grpc.exporter import Compression as GrpcCompression
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.span import TraceState

from tests.otlp_send import exporter, post, recording_provider


def make_spans(service: str):
    provider, memory = recording_provider(service, **{"deployment.environment": "test", "tracerl.rollout.task_id": "t-1"})
    tracer = provider.get_tracer("tests.scope", "9.9.9")
    linked = SpanContext(trace_id=0x0AF7651916CD43DD8448EB211C80319C, span_id=0x00F067AA0BA902B7,
                         is_remote=True, trace_flags=TraceFlags(1), trace_state=TraceState([("vendor", "v1")]))
    with tracer.start_as_current_span("rollout", kind=SpanKind.SERVER, links=[Link(linked, {"link.kind": "retry", "n": 2})]) as root:
        root.set_attributes({
            "str": "héllo <world> & co",
            "int": -42,
            "float": 3.0,
            "small": 1.5e-7,
            "big": 1e16,
            "bool": False,
            "ints": [1, 2, 3000000000],
            "floats": [-0.25, 1.0, 2.5e-5],
            "bools": [True, False],
            "strs": ["a", "b\"c", "<d>"],
        })
        root.add_event("tracerl.variable", {"tracerl.variable.name": "x", "tracerl.variable.value": '{"k": 1}'})
        root.add_event("plain")
        with tracer.start_as_current_span("chat model", kind=SpanKind.CLIENT) as child:
            child.set_attribute("gen_ai.request.model", "tiny")
            child.set_status(Status(StatusCode.ERROR, "upstream said no"))
        with tracer.start_as_current_span("ok span") as ok:
            ok.set_status(Status(StatusCode.OK))
    provider.shutdown()
    return memory.get_finished_spans()


@pytest.mark.parametrize("kind,compression", [
    ("grpc", None), ("http", None), ("grpc", GrpcCompression.Gzip), ("http", HttpCompression.Gzip)])
def test_sdk_exporters_round_trip_field_by_field(collector, kind, compression):
    service = f"roundtrip-{kind}-{compression and compression.value}-{secrets.token_hex(3)}"
    spans = make_spans(service)
    kwargs = {"compression": compression} if compression else {}
    assert exporter(kind, collector, **kwargs).export(spans) == SpanExportResult.SUCCESS

    rows = collector.rows(
        "SELECT *, toUnixTimestamp64Nano(Timestamp) AS ts_ns, "
        "arrayMap(t -> toUnixTimestamp64Nano(t), `Events.Timestamp`) AS ev_ns "
        "FROM otel_traces WHERE ServiceName = {s:String} ORDER BY SpanName", s=service)
    assert [r["SpanName"] for r in rows] == ["chat model", "ok span", "rollout"]
    by_name = {r["SpanName"]: r for r in rows}
    sdk = {s.name: s for s in spans}
    for name, row in by_name.items():
        span = sdk[name]
        assert row["TraceId"] == f"{span.context.trace_id:032x}"
        assert row["SpanId"] == f"{span.context.span_id:016x}"
        assert row["ParentSpanId"] == (f"{span.parent.span_id:016x}" if span.parent else "")
        assert row["ts_ns"] == span.start_time
        assert row["Duration"] == span.end_time - span.start_time
        assert row["ServiceName"] == service
        assert row["ScopeName"] == "tests.scope" and row["ScopeVersion"] == "9.9.9"
        assert row["ResourceAttributes"]["deployment.environment"] == "test"
        assert row["ResourceAttributes"]["tracerl.rollout.task_id"] == "t-1"
        assert row["ResourceAttributes"]["service.name"] == service

    root = by_name["rollout"]
    assert root["SpanKind"] == "Server" and root["StatusCode"] == "Unset"
    assert root["SpanAttributes"] == {
        "str": "héllo <world> & co",
        "int": "-42",
        "float": "3",
        "small": "1.5e-7",
        "big": "10000000000000000",
        "bool": "false",
        "ints": "[1,2,3000000000]",
        "floats": "[-0.25,1,0.000025]",
        "bools": "[true,false]",
        "strs": '["a","b\\"c","\\u003cd\\u003e"]',
    }
    assert root["Events.Name"] == ["tracerl.variable", "plain"]
    assert root["Events.Attributes"] == [{"tracerl.variable.name": "x", "tracerl.variable.value": '{"k": 1}'}, {}]
    assert root["ev_ns"] == [e.timestamp for e in sdk["rollout"].events]
    assert root["Links.TraceId"] == ["0af7651916cd43dd8448eb211c80319c"]
    assert root["Links.SpanId"] == ["00f067aa0ba902b7"]
    assert root["Links.TraceState"] == [""]  # the Python SDK's encoder does not send a link's trace state
    assert root["Links.Attributes"] == [{"link.kind": "retry", "n": "2"}]

    model = by_name["chat model"]
    assert model["SpanKind"] == "Client"
    assert model["StatusCode"] == "Error" and model["StatusMessage"] == "upstream said no"
    assert by_name["ok span"]["StatusCode"] == "Ok" and by_name["ok span"]["SpanKind"] == "Internal"

    # The lookup table is fed by its materialized view.
    ids = collector.rows("SELECT TraceId FROM otel_traces_trace_id_ts WHERE TraceId = {t:String}", t=root["TraceId"])
    assert ids and ids[0]["TraceId"] == root["TraceId"]


def test_otlp_json_round_trips(collector):
    """OTLP/JSON: hex ids, integer enums, camelCase keys, int64 as strings, every value kind."""
    trace_id, span_id, parent = secrets.token_hex(16), secrets.token_hex(8), secrets.token_hex(8)
    service = f"json-{secrets.token_hex(3)}"
    doc = {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{
            "scope": {"name": "json.scope", "version": "1"},
            "spans": [{
                "traceId": trace_id, "spanId": span_id, "parentSpanId": parent,
                "traceState": "a=b", "name": "json span", "kind": 3,
                "startTimeUnixNano": "1700000000123456789", "endTimeUnixNano": "1700000000623456789",
                "attributes": [
                    {"key": "i", "value": {"intValue": "7"}},
                    {"key": "d", "value": {"doubleValue": 0.5}},
                    {"key": "b", "value": {"boolValue": True}},
                    {"key": "bytes", "value": {"bytesValue": "aGVsbG8="}},
                    {"key": "arr", "value": {"arrayValue": {"values": [{"intValue": 1}, {"stringValue": "x"}]}}},
                    {"key": "map", "value": {"kvlistValue": {"values": [
                        {"key": "z", "value": {"intValue": "1"}}, {"key": "a", "value": {"stringValue": "&"}}]}}},
                ],
                "events": [{"timeUnixNano": "1700000000200000000", "name": "e1",
                            "attributes": [{"key": "k", "value": {"stringValue": "v"}}]}],
                "links": [{"traceId": trace_id, "spanId": parent, "traceState": "x=y", "attributes": []}],
                "status": {"code": 2, "message": "bad"},
                "someFutureField": 1,
            }],
        }],
    }]}
    status, headers, body = post(collector.http_endpoint, json.dumps(doc).encode(), "application/json")
    assert status == 200, body
    assert headers["Content-Type"].startswith("application/json")
    (row,) = collector.rows(
        "SELECT *, toUnixTimestamp64Nano(Timestamp) AS ts_ns FROM otel_traces WHERE TraceId = {t:String}", t=trace_id)
    assert row["SpanId"] == span_id and row["ParentSpanId"] == parent and row["TraceState"] == "a=b"
    assert row["ServiceName"] == service and row["SpanKind"] == "Client"
    assert row["ts_ns"] == 1700000000123456789 and row["Duration"] == 500_000_000
    assert row["StatusCode"] == "Error" and row["StatusMessage"] == "bad"
    assert row["SpanAttributes"] == {"i": "7", "d": "0.5", "b": "true", "bytes": "aGVsbG8=",
                                     "arr": '[1,"x"]', "map": '{"a":"\\u0026","z":1}'}
    assert row["Events.Name"] == ["e1"] and row["Events.Attributes"] == [{"k": "v"}]
    assert row["Links.TraceId"] == [trace_id] and row["Links.SpanId"] == [parent]
    assert row["Links.TraceState"] == ["x=y"]
