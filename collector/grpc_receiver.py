"""OTLP/gRPC: ``opentelemetry.proto.collector.trace.v1.TraceService/Export``.

The request is taken as raw bytes and decoded here, so a malformed message is answered with
INVALID_ARGUMENT (grpcio's own deserializer would report INTERNAL). gzip is handled by grpcio.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from .ingest import Busy, Ingest, ShuttingDown
from .otlp import InvalidPayload, parse_protobuf
from .writer import StoreUnavailable

log = logging.getLogger("tracerl.collector")
SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"


def make_export(ingest: Ingest):
    def export(body: bytes, context: grpc.ServicerContext) -> ExportTraceServiceResponse:
        metadata = dict(context.invocation_metadata())
        if not ingest.authorized(metadata.get("authorization")):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        try:
            ingest.admit()
        except Busy as exc:
            context.set_trailing_metadata((("retry-after", "1"),))
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except ShuttingDown as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        try:
            ingest.export(lambda: parse_protobuf(body))
        except InvalidPayload as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except StoreUnavailable as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, f"store unavailable: {exc}")
        except Exception as exc:  # noqa: BLE001 - never let a request kill the server
            log.exception("unexpected error in OTLP/gRPC export")
            context.abort(grpc.StatusCode.INTERNAL, f"internal error: {exc}")
        finally:
            ingest.release()
        return ExportTraceServiceResponse()

    return export


def start_grpc_receiver(ingest: Ingest, host: str, port: int) -> tuple[grpc.Server, int]:
    """Start the gRPC server; returns it and the bound port."""
    server = grpc.server(
        ThreadPoolExecutor(max_workers=ingest.max_inflight + 4, thread_name_prefix="tracerl-grpc"),
        options=[
            ("grpc.max_receive_message_length", ingest.max_body_bytes),
            ("grpc.so_reuseport", 0),
        ],
    )
    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "Export": grpc.unary_unary_rpc_method_handler(
            make_export(ingest),
            request_deserializer=None,  # raw bytes: decoded in export()
            response_serializer=ExportTraceServiceResponse.SerializeToString,
        ),
    })
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot bind OTLP/gRPC to {host}:{port}")
    server.start()
    return server, bound
