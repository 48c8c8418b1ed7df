"""Rollout identity given from outside the process.

The trainer launches an agent process per rollout. It says which rollout through two standard
channels, so that the agent's code does not change:
- ``OTEL_RESOURCE_ATTRIBUTES`` with ``tracerl.rollout.*`` keys: the resource of every span
  carries them, which marks the whole process as one rollout;
- ``TRACEPARENT`` (W3C trace-context, as the OpenTelemetry spec's environment carriers use it):
  the process's spans join that trace as children of that span.

One rollout is one trace. So when either is present, every span that would start a new trace in
this process (in any thread) gets the same trace id instead: `ProcessTraceIdGenerator`.
"""

from __future__ import annotations

import logging
import os

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from . import semconv

logger = logging.getLogger("tracerl.identity")


def parent_from_env(environ=None) -> trace.SpanContext | None:
    """The span context named by ``TRACEPARENT`` (and ``TRACESTATE``), or None."""
    environ = os.environ if environ is None else environ
    header = environ.get(semconv.ENV_TRACEPARENT)
    if not header:
        return None
    carrier = {"traceparent": header.strip()}
    if environ.get(semconv.ENV_TRACESTATE):
        carrier["tracestate"] = environ[semconv.ENV_TRACESTATE]
    ctx = TraceContextTextMapPropagator().extract(carrier)
    span_context = trace.get_current_span(ctx).get_span_context()
    if not span_context.is_valid:
        logger.warning("ignoring malformed %s=%r", semconv.ENV_TRACEPARENT, header)
        return None
    return span_context


def rollout_attributes(resource: Resource) -> dict:
    """The ``tracerl.rollout.*`` attributes of a resource (empty when the process is no rollout)."""
    return {k: v for k, v in resource.attributes.items() if k.startswith(semconv.ROLLOUT_PREFIX)}


class ProcessTraceIdGenerator(IdGenerator):
    """Every root span of the process gets ``trace_id``; span ids stay random."""

    def __init__(self, trace_id: int):
        self.trace_id = trace_id
        self._random = RandomIdGenerator()

    def generate_span_id(self) -> int:
        return self._random.generate_span_id()

    def generate_trace_id(self) -> int:
        return self.trace_id


def process_id_generator(resource: Resource, parent: trace.SpanContext | None) -> IdGenerator | None:
    """The id generator that makes this process one trace, or None for ordinary processes."""
    if parent is not None:
        return ProcessTraceIdGenerator(parent.trace_id)
    if rollout_attributes(resource):
        return ProcessTraceIdGenerator(RandomIdGenerator().generate_trace_id())
    return None


_attached = False


def join_parent(parent: trace.SpanContext | None) -> None:
    """Make ``parent`` the current span of this thread (and of the tasks and contexts copied from
    it), so top-level spans become its children. Done once, at start-up, on the main thread."""
    global _attached
    if parent is None or _attached:
        return
    _attached = True
    otel_context.attach(trace.set_span_in_context(trace.NonRecordingSpan(parent)))
