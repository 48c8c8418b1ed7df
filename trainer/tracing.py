"""The trainer's own spans: the ``tracerl.rollout`` root span of each rollout it launches.

The trainer opens the root span before it starts the agent and ends it when the agent is done,
so the rollout's trace has exactly one root, known before the agent starts (its trace id is the
rollout id), stamped with the rollout identity and ``tracerl.policy.version``, and ended only
after the agent exited: "root span stored" means "agent finished". The same SDK setup
instruments the OpenAI client in this process, which the `python` runner's agents use.
"""

from __future__ import annotations

import time

from opentelemetry import trace

from tracerl import semconv

from .runner.base import OK, RolloutSpec

_tracer = None


def setup(otlp_endpoint: str) -> None:
    """Trace to the collector at ``otlp_endpoint`` (gRPC host:port), capturing token ids."""
    global _tracer
    import tracerl

    tracerl.init(endpoint=otlp_endpoint, service_name="tracerl-trainer", capture_tokens=True)
    _tracer = trace.get_tracer("tracerl.trainer")


def start_rollout(spec: RolloutSpec, runner_kind: str) -> trace.Span:
    from tracerl.scopes import rollout_attributes

    attrs = rollout_attributes(spec.task_id, spec.task, spec.group_id, spec.attempt, spec.mode)
    attrs[semconv.POLICY_VERSION] = str(spec.policy_version)
    attrs[semconv.ROLLOUT_RUNNER] = runner_kind
    tracer = _tracer or trace.get_tracer("tracerl.trainer")
    # An empty context: every rollout is a new trace, whatever is current in this thread.
    from opentelemetry import context as otel_context

    return tracer.start_span(semconv.SPAN_ROLLOUT, context=otel_context.Context(), attributes=attrs)


def trace_id_of(span: trace.Span) -> str:
    return trace.format_trace_id(span.get_span_context().trace_id)


def traceparent_of(span: trace.Span) -> str:
    ctx = span.get_span_context()
    return f"00-{trace.format_trace_id(ctx.trace_id)}-{trace.format_span_id(ctx.span_id)}-01"


def end_rollout(span: trace.Span, status: str, exit_code: int | None, error: str = "") -> None:
    if exit_code is not None:
        span.set_attribute(semconv.ROLLOUT_EXIT_CODE, int(exit_code))
    span.set_attribute(semconv.ROLLOUT_STATUS, status)
    if status != OK:
        span.set_status(trace.Status(trace.StatusCode.ERROR, error or status))
    span.end()


def flush(timeout_s: float = 10.0) -> None:
    provider = trace.get_tracer_provider()
    if hasattr(provider, "force_flush"):
        provider.force_flush(int(timeout_s * 1000))


def now() -> float:
    return time.monotonic()
