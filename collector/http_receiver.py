"""OTLP/HTTP: ``POST /v1/traces`` with ``application/x-protobuf`` or ``application/json``.

Responses follow the OTLP/HTTP spec: success is an ``ExportTraceServiceResponse`` in the request's
encoding; failures carry a ``google.rpc.Status`` body and the status codes exporters act on
(400 bad payload, 401 missing token, 413 too large, 415 unknown content type, 429 busy and 503
store unavailable, both with Retry-After so exporters back off and retry).
"""

from __future__ import annotations

import json
import logging

from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from .httpbase import BadBody, BodyTooLarge, Handler, Server
from .ingest import Busy, Ingest, ShuttingDown
from .otlp import InvalidPayload, parse_json, parse_protobuf
from .writer import StoreUnavailable

log = logging.getLogger("tracerl.collector")

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
RETRY_AFTER_S = "1"


def make_handler(ingest: Ingest) -> type[Handler]:
    class OTLPHandler(Handler):
        max_body_bytes = ingest.max_body_bytes

        def _reply_error(self, status: int, grpc_code: int, message: str, content_type: str,
                         headers: dict | None = None) -> None:
            if content_type == JSON:
                body = json.dumps({"code": grpc_code, "message": message}).encode()
            else:
                content_type = PROTOBUF
                body = status_pb2.Status(code=grpc_code, message=message).SerializeToString()
            self.send_body(status, body, content_type, headers)

        def do_GET(self):  # noqa: N802 - stdlib naming
            if self.path in ("/", "/health"):
                self.send_body(200, b"ok\n", "text/plain")
            else:
                self._reply_error(404, code_pb2.NOT_FOUND, f"no such path {self.path}; OTLP traces go to POST /v1/traces", JSON)

        def do_POST(self):  # noqa: N802
            content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
            reply_type = JSON if content_type == JSON else PROTOBUF
            if self.path.split("?")[0] != "/v1/traces":
                self.close_connection = True
                return self._reply_error(404, code_pb2.NOT_FOUND, f"no such path {self.path}; OTLP traces go to POST /v1/traces", reply_type)
            if not ingest.authorized(self.headers.get("Authorization")):
                self.close_connection = True
                return self._reply_error(401, code_pb2.UNAUTHENTICATED, "missing or wrong bearer token", reply_type)
            if content_type not in (PROTOBUF, JSON):
                self.close_connection = True
                return self._reply_error(
                    415, code_pb2.INVALID_ARGUMENT,
                    f"unsupported Content-Type {content_type or '(none)'!r}; use {PROTOBUF} or {JSON}", reply_type)
            try:
                ingest.admit()
            except Busy as exc:
                self.close_connection = True
                return self._reply_error(429, code_pb2.RESOURCE_EXHAUSTED, str(exc), reply_type,
                                         {"Retry-After": RETRY_AFTER_S})
            except ShuttingDown as exc:
                self.close_connection = True
                return self._reply_error(503, code_pb2.UNAVAILABLE, str(exc), reply_type,
                                         {"Retry-After": RETRY_AFTER_S})
            try:
                self._export(content_type)
            finally:
                ingest.release()

        def _export(self, content_type: str) -> None:
            try:
                body = self.read_body()  # outside the decode slots: a slow client holds none
                parse = parse_json if content_type == JSON else parse_protobuf
                ingest.export(lambda: parse(body))
            except BodyTooLarge as exc:
                return self._reply_error(413, code_pb2.RESOURCE_EXHAUSTED, str(exc), content_type)
            except (BadBody, InvalidPayload) as exc:
                return self._reply_error(400, code_pb2.INVALID_ARGUMENT, str(exc), content_type)
            except StoreUnavailable as exc:
                return self._reply_error(503, code_pb2.UNAVAILABLE, f"store unavailable: {exc}", content_type,
                                         {"Retry-After": RETRY_AFTER_S})
            except Exception as exc:  # noqa: BLE001 - never let a request kill the server
                log.exception("unexpected error in OTLP/HTTP export")
                return self._reply_error(500, code_pb2.INTERNAL, f"internal error: {exc}", content_type)
            if content_type == JSON:
                self.send_body(200, b"{}", JSON)
            else:
                self.send_body(200, ExportTraceServiceResponse().SerializeToString(), PROTOBUF)

    return OTLPHandler


def start_http_receiver(ingest: Ingest, host: str, port: int) -> Server:
    return Server((host, port), make_handler(ingest))
