"""OTLP trace requests -> rows of ``otel_traces``, the way the contrib ClickHouse exporter writes them.

Ids become lowercase hex (an absent parent is ""), ``Timestamp`` is the span start, ``Duration``
is in nanoseconds, ``ServiceName`` comes from the ``service.name`` resource attribute, span kind
and status code are pdata's names, events and links fill the ``Nested`` columns. The output is
one ``JSONEachRow`` payload per request, built here on the request thread so the writer only
concatenates bytes.
"""

from __future__ import annotations

import base64
import json

import orjson
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from .anyvalue import as_string, attributes

SPAN_KINDS = ("Unspecified", "Internal", "Server", "Client", "Producer", "Consumer")
STATUS_CODES = ("Unset", "Ok", "Error")
INSERT_COLUMNS = (
    "Timestamp", "TraceId", "SpanId", "ParentSpanId", "TraceState", "SpanName", "SpanKind",
    "ServiceName", "ResourceAttributes", "ScopeName", "ScopeVersion", "SpanAttributes", "Duration",
    "StatusCode", "StatusMessage", "Events.Timestamp", "Events.Name", "Events.Attributes",
    "Links.TraceId", "Links.SpanId", "Links.TraceState", "Links.Attributes",
)


class InvalidPayload(ValueError):
    """The request cannot be accepted as sent (400 / INVALID_ARGUMENT); the message says why."""


_MAX_NS = 2**63  # DateTime64(9) ends in 2262


def _ts(ns: int) -> str:
    """Nanoseconds since the epoch as DateTime64(9) text. Ten integer digits: ClickHouse reads a
    shorter number before the dot as a date, not as a Unix time."""
    if ns >= _MAX_NS:
        raise InvalidPayload(f"timestamp {ns} ns is past the end of DateTime64(9) (year 2262)")
    return f"{ns // 1_000_000_000:010d}.{ns % 1_000_000_000:09d}"


def _id(raw: bytes, size: int, what: str, where: str, optional: bool = False) -> str:
    if len(raw) == size and raw != b"\0" * size:
        return raw.hex()
    if optional and (not raw or raw == b"\0" * size):
        return ""
    raise InvalidPayload(f"{where}: {what} must be {size} bytes and not all zero, got {len(raw)} bytes")


def parse_protobuf(body: bytes) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise InvalidPayload(f"malformed protobuf ExportTraceServiceRequest: {exc}") from None
    return request


_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def _hex_ids_to_base64(obj: dict, where: str) -> None:
    for key, size in _ID_FIELDS.items():
        value = obj.get(key)
        if value in (None, ""):
            continue
        if not isinstance(value, str):
            raise InvalidPayload(f"{where}: {key} must be a hex string")
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise InvalidPayload(f"{where}: {key} {value!r} is not hex") from None
        if len(raw) != size:
            raise InvalidPayload(f"{where}: {key} must be {size * 2} hex digits, got {len(value)}")
        obj[key] = base64.b64encode(raw).decode()


def parse_json(body: bytes) -> ExportTraceServiceRequest:
    """OTLP/JSON: protobuf JSON mapping, except that ids are hex (OTLP spec) not base64."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidPayload(f"malformed JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise InvalidPayload("malformed OTLP/JSON: the body must be a JSON object")
    try:
        for i, rs in enumerate(doc.get("resourceSpans") or []):
            for j, ss in enumerate(rs.get("scopeSpans") or []):
                for k, span in enumerate(ss.get("spans") or []):
                    where = f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}]"
                    _hex_ids_to_base64(span, where)
                    for n, link in enumerate(span.get("links") or []):
                        _hex_ids_to_base64(link, f"{where}.links[{n}]")
        return json_format.ParseDict(doc, ExportTraceServiceRequest(), ignore_unknown_fields=True)
    except InvalidPayload:
        raise
    except (json_format.ParseError, AttributeError, TypeError, ValueError) as exc:
        raise InvalidPayload(f"malformed OTLP/JSON: {exc}") from None


def to_rows(request: ExportTraceServiceRequest) -> tuple[bytes, int]:
    """The rows of ``request`` as one JSONEachRow payload (a JSON array of objects) and its count.

    Raises InvalidPayload for an invalid id, so a request is accepted whole or not at all.
    """
    rows = []
    append = rows.append
    for i, rs in enumerate(request.resource_spans):
        resource_attrs = attributes(rs.resource.attributes)
        service = resource_attrs.get("service.name", "")
        for j, ss in enumerate(rs.scope_spans):
            scope_name = ss.scope.name
            scope_version = ss.scope.version
            for k, span in enumerate(ss.spans):
                where = f"resource_spans[{i}].scope_spans[{j}].spans[{k}]"
                start = span.start_time_unix_nano
                end = span.end_time_unix_nano
                status = span.status
                row = {
                    "Timestamp": _ts(start),
                    "TraceId": _id(span.trace_id, 16, "trace_id", where),
                    "SpanId": _id(span.span_id, 8, "span_id", where),
                    "ParentSpanId": _id(span.parent_span_id, 8, "parent_span_id", where, optional=True)
                    if span.parent_span_id else "",
                    "TraceState": span.trace_state,
                    "SpanName": span.name,
                    "SpanKind": SPAN_KINDS[span.kind] if 0 <= span.kind < 6 else "Unspecified",
                    "ServiceName": service,
                    "ResourceAttributes": resource_attrs,
                    "ScopeName": scope_name,
                    "ScopeVersion": scope_version,
                    "SpanAttributes": attributes(span.attributes),
                    "Duration": end - start if end > start else 0,
                    "StatusCode": STATUS_CODES[status.code] if 0 <= status.code < 3 else "Unset",
                    "StatusMessage": status.message,
                }
                if span.events:
                    row["Events.Timestamp"] = [_ts(e.time_unix_nano) for e in span.events]
                    row["Events.Name"] = [e.name for e in span.events]
                    row["Events.Attributes"] = [attributes(e.attributes) for e in span.events]
                if span.links:
                    row["Links.TraceId"] = [_id(ln.trace_id, 16, "link trace_id", where) for ln in span.links]
                    row["Links.SpanId"] = [_id(ln.span_id, 8, "link span_id", where) for ln in span.links]
                    row["Links.TraceState"] = [ln.trace_state for ln in span.links]
                    row["Links.Attributes"] = [attributes(ln.attributes) for ln in span.links]
                append(row)
    return orjson.dumps(rows), len(rows)


__all__ = ["INSERT_COLUMNS", "InvalidPayload", "as_string", "parse_json", "parse_protobuf", "to_rows"]
