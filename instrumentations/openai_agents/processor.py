"""A TracingProcessor of the OpenAI Agents SDK that mirrors its spans into OpenTelemetry.

The SDK keeps its own traces and spans (in its own context variables) and tells its processors
when each starts and ends. OpenTelemetry knows nothing of them, so by default the OpenAI-client
spans of a run would have no agent above them. This processor opens an OpenTelemetry span for
each SDK trace and span, parented by the SDK's own ``parent_id``, and *attaches it to the
current OpenTelemetry context* when it starts and detaches it when it ends. The SDK starts and
ends its spans in the task that does the work (``on_span_start`` is called synchronously from
``Span.start``), so everything that runs inside an SDK span, the OpenAI client's call
included, sees the mirrored span as current: for ``Runner.run``, ``Runner.run_sync`` and
streamed runs alike, and for tools the SDK runs in other tasks or threads (they copy the
context they were started from).

What each SDK span becomes:

- trace -> a span named like the workflow; a root span (one trace per run) unless an
  OpenTelemetry span, a ``tracerl.rollout`` say, is current when the run starts;
- agent -> ``invoke_agent <name>`` with ``gen_ai.agent.name``, plus the agent's input (its
  first model call's input) and output (its last model call's output text) as
  ``tracerl.variable`` events;
- response / generation -> the framework's record of the model call (``chat <model>``, with
  ``gen_ai.response.id``); the OpenAI-client span of the call is its child (the nesting rule in
  `tracerl.semconv`);
- function -> ``execute_tool <name>`` with arguments and result;
- handoff -> ``handoff`` with the two agents' names;
- anything else (guardrails, custom spans, MCP listings) -> a span named by its type.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from agents.tracing import TracingProcessor
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from tracerl import semconv

from .. import OnceLogger
from .._context import attach, detach
from .._values import add_variable, as_text
from .data import end_attributes, output_text, start_attributes

logger = logging.getLogger("tracerl.instrumentations.openai_agents")
log_bug = OnceLogger(logger)


@dataclass
class _Mirror:
    span: Any
    token: Any
    agent: "_Mirror | None" = None  # the agent span this one runs in (itself for an agent)
    inputs: list = field(default_factory=list)  # agent only: first model input
    output: Any = None  # agent only: last model output text


class OpenTelemetryProcessor(TracingProcessor):
    def __init__(self, tracer):
        self.tracer = tracer
        self._open: dict[str, _Mirror] = {}
        self._lock = threading.Lock()

    # --- traces ------------------------------------------------------------------------------
    def on_trace_start(self, sdk_trace) -> None:
        try:
            name = getattr(sdk_trace, "name", None) or "Agent workflow"
            span = self.tracer.start_span(name, context=otel_context.get_current(), kind=SpanKind.INTERNAL)
            self._keep(sdk_trace.trace_id, _Mirror(span, attach(span)))
        except Exception:
            log_bug("openai_agents on_trace_start")

    def on_trace_end(self, sdk_trace) -> None:
        try:
            mirror = self._take(sdk_trace.trace_id)
            if mirror is not None:
                detach(mirror.token)
                mirror.span.end()
        except Exception:
            log_bug("openai_agents on_trace_end")

    # --- spans -------------------------------------------------------------------------------
    def on_span_start(self, sdk_span) -> None:
        try:
            with self._lock:
                above = self._open.get(sdk_span.parent_id or "") or self._open.get(sdk_span.trace_id)
            ctx = trace.set_span_in_context(above.span) if above is not None else otel_context.get_current()
            name, kind, attrs = start_attributes(sdk_span.span_data)
            span = self.tracer.start_span(name, context=ctx, kind=kind, attributes=attrs)
            mirror = _Mirror(span, attach(span), above.agent if above is not None else None)
            if attrs.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_INVOKE_AGENT:
                mirror.agent = mirror
            self._keep(sdk_span.span_id, mirror)
        except Exception:
            log_bug("openai_agents on_span_start")

    def on_span_end(self, sdk_span) -> None:
        try:
            mirror = self._take(sdk_span.span_id)
            if mirror is None:
                return
            data = sdk_span.span_data
            name, attrs = end_attributes(data)
            if name:
                mirror.span.update_name(name)
            mirror.span.set_attributes(attrs)
            self._remember_io(mirror, data)
            if mirror.agent is mirror:
                if mirror.inputs:
                    add_variable(mirror.span, semconv.VAR_AGENT_INPUT, mirror.inputs[0])
                if mirror.output is not None:  # an agent that only handed off answered nothing
                    add_variable(mirror.span, semconv.VAR_AGENT_OUTPUT, mirror.output)
            error = getattr(sdk_span, "error", None)
            if error:
                message = error.get("message") if isinstance(error, dict) else str(error)
                mirror.span.set_status(Status(StatusCode.ERROR, as_text(message, 1024)))
            detach(mirror.token)
            mirror.span.end()
        except Exception:
            log_bug("openai_agents on_span_end")

    def _remember_io(self, mirror: _Mirror, data) -> None:
        """A model call tells its agent what the agent was given (the first call's input) and
        what it answered (the last call's output text)."""
        agent = mirror.agent
        if agent is None or agent is mirror or data.type not in ("response", "generation"):
            return
        if not agent.inputs and getattr(data, "input", None) is not None:
            agent.inputs.append(data.input)
        text = output_text(data)
        if text:
            agent.output = text

    # --- bookkeeping -------------------------------------------------------------------------
    def _keep(self, key: str, mirror: _Mirror) -> None:
        with self._lock:
            self._open[key] = mirror

    def _take(self, key: str) -> "_Mirror | None":
        with self._lock:
            return self._open.pop(key, None)

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass
