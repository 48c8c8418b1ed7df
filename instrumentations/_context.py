"""Making a framework's span the current OpenTelemetry span, and undoing that quietly.

LangChain callbacks and the OpenAI Agents SDK's tracing processors are told that a step starts
and, later, that it ends; they do not wrap the step in a ``with``. To make the OpenAI-client
spans of that step its children, the plugin attaches the step's span to the current context at
the start and detaches it at the end. A framework may end a step in another task or thread than
the one it started in (the token then belongs to another context); OpenTelemetry's own
``detach`` logs an error for that, which would flood the agent's log for a harmless case.
"""

from __future__ import annotations

from opentelemetry import context as otel_context
from opentelemetry import trace


def attach(span) -> object:
    """Make ``span`` current in this context; returns the token for `detach`."""
    return otel_context.attach(trace.set_span_in_context(span))


def detach(token) -> None:
    """Undo `attach` when still in the context it was made in; otherwise leave that context
    alone (it belongs to a task or thread that has moved on)."""
    if token is None:
        return
    var = getattr(token, "var", None)
    if var is None:  # not a contextvars token: a custom runtime context
        otel_context.detach(token)
        return
    try:
        var.reset(token)
    except (ValueError, RuntimeError):
        pass
