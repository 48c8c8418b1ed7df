"""The input and the final answer of an AutoGen ``AssistantAgent``, as semantic variables.

``on_messages_stream`` is where every way of running an AssistantAgent ends up (``run`` through
``on_messages``, ``run_stream``, and a team's turn), and it runs inside AutoGen's
``invoke_agent`` span for that agent. The wrapper passes every item through unchanged and
records the messages it was given and the ``Response`` it produced as ``tracerl.variable``
events on that span.
"""

from __future__ import annotations

import logging

from opentelemetry import trace

from tracerl import semconv

from .. import OnceLogger
from .._values import add_variable

logger = logging.getLogger("tracerl.instrumentations.autogen")
log_bug = OnceLogger(logger)


def _agent_span(agent_name: str):
    span = trace.get_current_span()
    attrs = getattr(span, "attributes", None) or {}
    if span.is_recording() and attrs.get(semconv.GEN_AI_AGENT_NAME) == agent_name \
            and attrs.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_INVOKE_AGENT:
        return span
    return None


def _message(msg) -> dict:
    """A chat message or event as ``{"source", "type", "content"}``, the way AutoGen shows it."""
    content = getattr(msg, "content", None)
    if not isinstance(content, (str, int, float, bool, type(None))):
        to_text = getattr(msg, "to_text", None)
        content = to_text() if callable(to_text) else repr(content)
    return {"source": getattr(msg, "source", None), "type": type(msg).__name__, "content": content}


def traced_stream(wrapped, instance, args, kwargs):
    messages = args[0] if args else kwargs.get("messages", ())
    return _Traced(wrapped(*args, **kwargs), instance.name, messages).run()


class _Traced:
    def __init__(self, stream, agent_name: str, messages):
        self.stream, self.agent_name, self.messages = stream, agent_name, messages

    async def run(self):
        span = None
        try:
            span = _agent_span(self.agent_name)
            if span is not None:
                add_variable(span, semconv.VAR_AGENT_INPUT, [_message(m) for m in self.messages or ()])
        except Exception:
            log_bug("autogen agent input")
        try:
            async for item in self.stream:
                if span is not None and hasattr(item, "chat_message"):  # the final Response
                    try:
                        add_variable(span, semconv.VAR_AGENT_OUTPUT, _message(item.chat_message))
                    except Exception:
                        log_bug("autogen agent output")
                yield item
        finally:
            await self.stream.aclose()
