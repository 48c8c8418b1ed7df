"""Setting up the OpenTelemetry SDK for tracerl, by `init()` or by ``opentelemetry-instrument``.

One function builds the SDK either way (`configure_sdk`), on top of the SDK's own environment
handling, so every standard ``OTEL_*`` variable keeps its meaning. tracerl adds three things:
redaction and drop-counting around the exporter, a process-wide trace id when the process is one
rollout (`identity`), and the activation of tracerl's instrumentors.

When the process already has a tracer provider that tracerl did not build, tracerl adds only its
redaction around that provider's processors (`adopt_provider`) and builds nothing.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
from importlib import import_module, metadata

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk._configuration import _get_exporter_entry_point, _initialize_components
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

from . import config, identity, semconv
from .export import GuardedSpanExporter
from .redaction import RedactingSpanExporter, RedactingSpanProcessor, build_redactor

logger = logging.getLogger("tracerl")

ENTRY_POINT_GROUP = "opentelemetry_instrumentor"
ENTRY_POINT_PREFIX = "tracerl_"
DEFAULT_ENDPOINT = "localhost:4317"
# Short by default: at exit the batch processor waits for the last export, and a dead collector
# must not hold the agent for the SDK's default 10 s. OTEL_EXPORTER_OTLP_*TIMEOUT still win.
DEFAULT_EXPORT_TIMEOUT_S = 2.0
_MARK = "_tracerl_installed"

_lock = threading.RLock()
_configured = False


def is_configured() -> bool:
    return _configured


def init(endpoint: str | None = None, service_name: str | None = None,
         capture_tokens: bool | None = None, redact=None):
    """Set up tracing for tracerl; returns the tracer provider in use.

    Builds the SDK with an OTLP exporter (gRPC to ``localhost:4317`` unless ``endpoint`` or the
    ``OTEL_EXPORTER_OTLP_*`` variables say otherwise) unless the process already has a tracer
    provider, in which case only tracerl's redaction is added to it. Then activates every tracerl
    instrumentor whose library is installed. Idempotent; under ``opentelemetry-instrument`` all of
    this has already happened and only ``capture_tokens`` still has an effect.
    """
    global _configured
    with _lock:
        if capture_tokens is not None:
            config.set_capture_tokens(capture_tokens)
        if not _configured:
            try:
                current = trace.get_tracer_provider()
                if isinstance(current, trace.ProxyTracerProvider):
                    configure_sdk(endpoint=endpoint, service_name=service_name, redact=redact,
                                  trace_exporter_names=None if os.environ.get("OTEL_TRACES_EXPORTER") else ["otlp"])
                else:
                    adopt_provider(current, redact=redact)
            except Exception:  # tracing must never stop the agent from starting
                logger.exception("tracerl could not set up tracing; the agent runs untraced")
            _configured = True
        activate_instrumentors()
        return trace.get_tracer_provider()


def configure_sdk(endpoint: str | None = None, service_name: str | None = None, redact=None,
                  **components) -> None:
    """Build and install the SDK (tracer provider, exporters from ``OTEL_*``, tracerl wrappers).

    ``components`` are passed on to the SDK's ``_initialize_components``, the function the SDK's
    own configurator uses, so tracerl's setup reads the environment exactly as the default does.
    """
    global _configured
    redactor = build_redactor(redact)
    attributes = {SERVICE_NAME: service_name} if service_name else {}
    resource = Resource.create(attributes)
    parent = identity.parent_from_env()
    id_generator = identity.process_id_generator(resource, parent)
    target = _target(endpoint)

    def export_processor(exporter):
        return BatchSpanProcessor(RedactingSpanExporter(GuardedSpanExporter(exporter, target), redactor))

    args = _exporter_args(endpoint)
    exporter_args_map = dict(components.pop("exporter_args_map", None) or {})
    for cls, extra in args.items():
        exporter_args_map[cls] = {**extra, **exporter_args_map.get(cls, {})}
    kwargs = dict(components, resource_attributes={**components.get("resource_attributes", {}), **attributes},
                  exporter_args_map=exporter_args_map)
    if kwargs.get("trace_exporter_names"):  # "otlp" -> otlp_proto_grpc / _http, as the SDK does for env names
        kwargs["trace_exporter_names"] = [_get_exporter_entry_point(n, "traces") for n in kwargs["trace_exporter_names"]]
    if id_generator is not None:
        kwargs.setdefault("id_generator", id_generator)
    supported = inspect.signature(_initialize_components).parameters
    if "export_span_processor" in supported:
        kwargs["export_span_processor"] = export_processor
    _initialize_components(**{k: v for k, v in kwargs.items() if k in supported})
    provider = trace.get_tracer_provider()
    if "export_span_processor" not in supported:
        adopt_provider(provider, redact=redact)
    setattr(provider, _MARK, True)
    identity.join_parent(parent)
    _configured = True


def adopt_provider(provider, redact=None) -> None:
    """Add tracerl's redaction and rollout identity to a provider someone else built.

    Redaction wraps the provider's current processors (the SDK offers no public way to insert a
    processor in front of the exporting ones); processors added later are not wrapped.
    """
    global _configured
    _configured = True
    if getattr(provider, _MARK, False) or not isinstance(provider, TracerProvider):
        return
    setattr(provider, _MARK, True)
    redactor = build_redactor(redact)
    multi = getattr(provider, "_active_span_processor", None)
    procs = getattr(multi, "_span_processors", None)
    if redactor and isinstance(procs, tuple):
        with multi._lock:
            multi._span_processors = tuple(
                p if isinstance(p, RedactingSpanProcessor) else RedactingSpanProcessor(p, redactor)
                for p in procs)
    elif redactor:
        logger.warning("tracerl could not add redaction to this tracer provider")
    parent = identity.parent_from_env()
    generator = identity.process_id_generator(provider.resource, parent)
    if generator is not None and isinstance(provider.id_generator, RandomIdGenerator):
        provider.id_generator = generator
    identity.join_parent(parent)


def activate_instrumentors() -> list[str]:
    """Instrument every tracerl instrumentor (``tracerl_*`` entry points) whose library is
    installed; returns the names activated now. Failures are logged, never raised."""
    done = []
    for name, target in _registry().items():
        try:
            module_name, _, attr = target.partition(":")
            instrumentor = getattr(import_module(module_name), attr)()
            if instrumentor.is_instrumented_by_opentelemetry:
                continue
            installed = getattr(instrumentor, "library_installed", None)
            if installed is not None and not installed():
                continue
            instrumentor.instrument()
            done.append(name)
        except Exception:
            logger.exception("tracerl could not activate instrumentor %s", name)
    return done


def _registry() -> dict[str, str]:
    """``name -> "module:Class"`` from the installed entry points; when tracerl runs from a source
    tree without its metadata, from `tracerl.instrumentations.REGISTRY`."""
    found = {ep.name: ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)
             if ep.name.startswith(ENTRY_POINT_PREFIX) and ep.value.startswith("tracerl.")}
    if found:
        return found
    try:
        return dict(import_module("tracerl.instrumentations").REGISTRY)
    except ImportError:
        return {}


def _exporter_args(endpoint: str | None) -> dict:
    """Constructor arguments for the OTLP exporter classes: the endpoint given to `init`, and
    tracerl's short timeout unless an ``OTEL_EXPORTER_OTLP_*TIMEOUT`` variable is set."""
    grpc, http = {}, {}
    if not (os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")):
        timeout = float(os.environ.get(semconv.ENV_EXPORT_TIMEOUT, DEFAULT_EXPORT_TIMEOUT_S))
        grpc["timeout"] = http["timeout"] = timeout
    if endpoint:
        grpc["endpoint"] = endpoint if "://" in endpoint else "http://" + endpoint
        http_ep = endpoint if "://" in endpoint else "http://" + endpoint
        http["endpoint"] = http_ep if http_ep.rstrip("/").endswith("/v1/traces") else http_ep.rstrip("/") + "/v1/traces"
    return {GrpcExporter: grpc, HttpExporter: http}


def _target(endpoint: str | None) -> str:
    return (endpoint or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or DEFAULT_ENDPOINT)
