"""Which rollout a call belongs to, and the rollout root spans the gateway holds open.

One rollout is one trace. An agent behind the gateway says which rollout a call is part of in
one of three ways, none of which touches its code:

1. the base URL: ``http://gateway/rollout/<key>/v1`` (the trainer sets ``OPENAI_BASE_URL``); a
   key that is a W3C traceparent (``00-<trace id>-<span id>-01``) works as the header below
   does, so a trainer that opened the rollout's root span itself needs to register nothing;
2. the ``x-tracerl-rollout: <key>`` header (for harnesses that take extra headers, not URLs);
3. the W3C ``traceparent`` header (a harness that propagates trace context itself): the call's
   span becomes a child of that span, in that trace, and the rollout's root span is whoever
   made that trace (the trainer, with `tracerl.rollout`).

A key names a rollout the trainer registered (``POST /admin/rollouts``: task, group, attempt,
mode, policy version), whose ``tracerl.rollout`` root span the gateway started and holds open
until the trainer ends it. A key nobody registered opens a rollout on first use, with the key
as its task id; it ends when the trainer ends it, when it has been idle for ``rollout_idle_s``,
or when the gateway stops. The key also picks the upstream (`upstreams`); for ``traceparent``
the trace id does.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from dataclasses import dataclass, field

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from tracerl import semconv
from tracerl.scopes import rollout_attributes

KEY_MAX_CHARS = 200
_propagator = TraceContextTextMapPropagator()


class BadKey(ValueError):
    pass


def check_key(key: str) -> str:
    """Keys travel in URL paths and headers: printable ASCII without ``/``, at most 200 chars."""
    if not key or len(key) > KEY_MAX_CHARS or "/" in key or not all(" " < c <= "~" for c in key):
        raise BadKey(f"rollout key {key[:KEY_MAX_CHARS]!r}: expected 1-{KEY_MAX_CHARS} printable ASCII "
                     "characters without '/' or spaces")
    return key


def new_key() -> str:
    return "r-" + secrets.token_hex(8)


@dataclass(eq=False)
class Rollout:
    key: str
    span: trace.Span
    implicit: bool
    calls: int = 0
    active: int = 0
    last_used: float = field(default_factory=time.monotonic)
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self):
        self.idle.set()
        self.context = trace.set_span_in_context(self.span, otel_context.Context())

    @property
    def trace_id(self) -> str:
        return trace.format_trace_id(self.span.get_span_context().trace_id)

    def traceparent(self) -> str:
        ctx = self.span.get_span_context()
        return f"00-{trace.format_trace_id(ctx.trace_id)}-{trace.format_span_id(ctx.span_id)}-01"

    def call_started(self) -> None:
        self.calls += 1
        self.active += 1
        self.last_used = time.monotonic()
        self.idle.clear()

    def call_ended(self) -> None:
        self.active -= 1
        self.last_used = time.monotonic()
        if self.active == 0:
            self.idle.set()

    def describe(self) -> dict:
        return {"key": self.key, "trace_id": self.trace_id, "traceparent": self.traceparent(),
                "calls": self.calls, "in_flight": self.active, "implicit": self.implicit}


class Rollouts:
    """The open rollouts, by key. Lives on the event loop's thread; no locking needed."""

    def __init__(self, tracer: trace.Tracer, idle_s: float):
        self.tracer = tracer
        self.idle_s = idle_s
        self.open_rollouts: dict[str, Rollout] = {}

    def open(self, key: str, attributes: dict, implicit: bool = False) -> Rollout:
        if key in self.open_rollouts:
            raise KeyError(key)
        span = self.tracer.start_span(semconv.SPAN_ROLLOUT, context=otel_context.Context(),
                                      kind=SpanKind.INTERNAL, attributes=attributes)
        rollout = self.open_rollouts[key] = Rollout(key, span, implicit)
        return rollout

    def get_or_open(self, key: str) -> Rollout:
        rollout = self.open_rollouts.get(key)
        if rollout is None:
            rollout = self.open(key, rollout_attributes(task_id=key), implicit=True)
        return rollout

    def reward(self, rollout: Rollout, attributes: dict) -> None:
        """A ``tracerl.reward`` span under the rollout's root, like `tracerl.emit_reward`."""
        self.tracer.start_span(semconv.SPAN_REWARD, context=rollout.context, attributes=attributes).end()

    async def end(self, key: str, wait_s: float) -> Rollout:
        """End the rollout after its calls in flight finish (at most ``wait_s``)."""
        rollout = self.open_rollouts.pop(key)
        try:
            await asyncio.wait_for(rollout.idle.wait(), wait_s)
        except asyncio.TimeoutError:
            pass
        rollout.span.end()
        return rollout

    def idle_keys(self) -> list[str]:
        if self.idle_s <= 0:
            return []
        limit = time.monotonic() - self.idle_s
        return [k for k, r in self.open_rollouts.items() if r.active == 0 and r.last_used < limit]

    def end_all(self) -> None:
        for rollout in self.open_rollouts.values():
            rollout.span.end()
        self.open_rollouts.clear()


@dataclass
class Attribution:
    """Where a call's span goes: under ``parent`` (None: a trace of its own), counted on
    ``rollout`` when the gateway holds it, on the upstream chosen by ``sticky_key``."""

    parent: otel_context.Context | None = None
    rollout: Rollout | None = None
    sticky_key: str | None = None


def attribute(path_key: str | None, headers, rollouts: Rollouts) -> Attribution:
    """The rollout of a call: path prefix, else ``x-tracerl-rollout``, else ``traceparent``
    (a key in traceparent form names a remote parent too, unless a rollout has that key).
    Raises `BadKey` for a malformed key; a malformed ``traceparent`` is ignored, as the W3C
    specification asks of receivers."""
    key = path_key if path_key is not None else headers.get(semconv.HEADER_ROLLOUT)
    if key is not None:
        if _TRACEPARENT.fullmatch(key) and key not in rollouts.open_rollouts:
            remote = _remote_parent(key, None)
            if remote is not None:
                return remote
        rollout = rollouts.get_or_open(check_key(key))
        return Attribution(rollout.context, rollout, key)
    if "traceparent" in headers:
        return _remote_parent(headers["traceparent"], headers.get("tracestate")) or Attribution()
    return Attribution()


_TRACEPARENT = re.compile(r"00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")


def _remote_parent(traceparent: str, tracestate: str | None) -> Attribution | None:
    """Calls under a span of another process (the trainer's rollout root), in its trace."""
    carrier = {"traceparent": traceparent}
    if tracestate:
        carrier["tracestate"] = tracestate
    ctx = _propagator.extract(carrier, context=otel_context.Context())
    span_context = trace.get_current_span(ctx).get_span_context()
    if not span_context.is_valid:
        return None
    return Attribution(ctx, None, trace.format_trace_id(span_context.trace_id))
