"""The hand-written part of the trace: rollouts, rewards, semantic variables, agent scopes.

Everything the trainer needs that no library call shows: where a rollout starts and ends, which
task it ran, what it earned. Each helper makes ordinary OpenTelemetry spans and events named by
`tracerl.semconv`, so any OTLP pipeline carries them.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import logging
import numbers

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from . import identity, semconv
from ._json import dumps

logger = logging.getLogger("tracerl")

VARIABLE_MAX_CHARS = 16 * 1024
TASK_MAX_CHARS = 64 * 1024

_tracer = trace.get_tracer(semconv.SCOPE_SDK)


class _Scope:
    """A span that is a context manager and a decorator (sync and async functions alike)."""

    def _start(self) -> trace.Span:
        raise NotImplementedError

    def __enter__(self):
        self.span = self._start()
        self._token = otel_context.attach(trace.set_span_in_context(self.span))
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc is not None:
                self.span.record_exception(exc)
                self.span.set_status(trace.Status(trace.StatusCode.ERROR, f"{exc_type.__name__}: {exc}"))
        finally:
            otel_context.detach(self._token)
            self.span.end()
        return False

    async def __aenter__(self):
        return self.__enter__()

    async def __aexit__(self, exc_type, exc, tb):
        return self.__exit__(exc_type, exc, tb)

    def _for_call(self, fn, args, kwargs) -> "_Scope":
        return self

    def __call__(self, fn):
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args, **kwargs):
                with self._for_call(fn, args, kwargs):
                    return await fn(*args, **kwargs)
            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._for_call(fn, args, kwargs):
                return fn(*args, **kwargs)
        return wrapper


class rollout(_Scope):
    """Root span of one rollout; the trace it starts is the rollout (``r.trace_id``).

    ``with tracerl.rollout(task_id="q17", task={"question": ...}) as r:`` or, as a decorator,
    ``@tracerl.rollout()`` on a function that runs one task: then each call is one rollout,
    ``task`` defaults to the call's arguments and ``task_id`` to a hash of them.

    A rollout never nests under an unrelated current span (each rollout is its own trace); it
    joins the trace the launching process named in ``TRACEPARENT``.
    """

    def __init__(self, task_id=None, task=None, group_id=None, attempt: int = 0, mode: str = "train"):
        if mode not in semconv.ROLLOUT_MODES:
            raise ValueError(f"mode must be one of {semconv.ROLLOUT_MODES}, not {mode!r}")
        self.task_id, self.task, self.group_id = task_id, task, group_id
        self.attempt, self.mode = int(attempt), mode
        self.span = trace.INVALID_SPAN

    @property
    def trace_id(self) -> str:
        """The rollout id: the trace id as 32 hex digits, as ``otel_traces.TraceId`` holds it."""
        return trace.format_trace_id(self.span.get_span_context().trace_id)

    @property
    def span_id(self) -> str:
        return trace.format_span_id(self.span.get_span_context().span_id)

    def _for_call(self, fn, args, kwargs) -> "rollout":
        task = self.task
        if task is None:
            try:
                bound = inspect.signature(fn).bind(*args, **kwargs)
                task = {k: v for k, v in bound.arguments.items() if k not in ("self", "cls")}
            except TypeError:
                task = {"args": list(args), "kwargs": kwargs}
        return rollout(self.task_id, task, self.group_id, self.attempt, self.mode)

    def _start(self) -> trace.Span:
        attrs = rollout_attributes(self.task_id, self.task, self.group_id, self.attempt, self.mode)
        parent = identity.parent_from_env()
        ctx = trace.set_span_in_context(trace.NonRecordingSpan(parent)) if parent else otel_context.Context()
        return _tracer.start_span(semconv.SPAN_ROLLOUT, context=ctx, kind=SpanKind.INTERNAL, attributes=attrs)


class agent(_Scope):
    """An agent scope in hand-written multi-agent code: an ``invoke_agent`` span whose
    descendants (LLM calls, tools) are that agent's. Context manager or decorator."""

    def __init__(self, name: str, **attributes):
        self.name = str(name)
        self.attributes = attributes

    def _for_call(self, fn, args, kwargs) -> "agent":
        return agent(self.name, **self.attributes)

    def _start(self) -> trace.Span:
        attrs = {semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT,
                 semconv.GEN_AI_AGENT_NAME: self.name}
        attrs.update({k: v for k, v in self.attributes.items() if isinstance(v, (str, bool, int, float))})
        return _tracer.start_span(f"{semconv.OP_INVOKE_AGENT} {self.name}", kind=SpanKind.INTERNAL,
                                  attributes=attrs)


def emit_reward(value, name: str = semconv.REWARD_PRIMARY, **components) -> None:
    """Record a reward: a ``tracerl.reward`` span under the current span with the primary
    ``value`` and one attribute per named component. Several calls in one rollout are
    intermediate rewards, each attached to the LLM call before it."""
    _tracer.start_span(semconv.SPAN_REWARD, attributes=reward_attributes(value, name, components)).end()


def rollout_attributes(task_id=None, task=None, group_id=None, attempt: int = 0, mode: str = "train") -> dict:
    """The attributes of a ``tracerl.rollout`` root span. Shared with the gateway, which opens
    rollouts for agents that cannot call `rollout` themselves, so both write the same shape."""
    if mode not in semconv.ROLLOUT_MODES:
        raise ValueError(f"mode must be one of {semconv.ROLLOUT_MODES}, not {mode!r}")
    task_json = dumps(task, TASK_MAX_CHARS) if task is not None else None
    if task_id is None:
        if task_json is None:
            raise ValueError("tracerl.rollout needs task_id or task")
        task_id = hashlib.sha1(task_json.encode()).hexdigest()[:16]
    attrs = {
        semconv.ROLLOUT_TASK_ID: str(task_id),
        semconv.ROLLOUT_GROUP_ID: str(group_id if group_id is not None else task_id),
        semconv.ROLLOUT_ATTEMPT: int(attempt),
        semconv.ROLLOUT_MODE: mode,
    }
    if task_json is not None:
        attrs[semconv.ROLLOUT_TASK] = task_json
    return attrs


def reward_attributes(value, name: str = semconv.REWARD_PRIMARY, components: dict | None = None) -> dict:
    """The attributes of a ``tracerl.reward`` span (shared with the gateway's reward endpoint).
    Raises TypeError for a value or component that is not a number."""
    attrs = {semconv.REWARD_VALUE: _number(value, "value"), semconv.REWARD_NAME: str(name)}
    for key, component in (components or {}).items():
        attrs[semconv.reward_component(key)] = _number(component, key)
    return attrs


def emit_variable(name: str, value) -> None:
    """Record a semantic variable (an intermediate value the reward or a credit rule may need)
    as a ``tracerl.variable`` event on the current span; the value is JSON, capped in size."""
    span = trace.get_current_span()
    if not span.is_recording():
        return
    span.add_event(semconv.EVENT_VARIABLE, {semconv.VARIABLE_NAME: str(name),
                                            semconv.VARIABLE_VALUE: dumps(value, VARIABLE_MAX_CHARS)})


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise TypeError(f"reward {what} must be a number, not {type(value).__name__}") from None
    return float(value)
