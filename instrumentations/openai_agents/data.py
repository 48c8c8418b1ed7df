"""The OpenAI Agents SDK's span data as OpenTelemetry span names and GenAI attributes.

Split in two because the SDK fills most of its span data only before the span ends (the
response of a model call, a tool's output, a handoff's target): `start_attributes` names the
span and says what it is, `end_attributes` adds what the SDK learned meanwhile. Read by
attribute name with defaults throughout: span data classes gain fields between SDK versions.
"""

from __future__ import annotations

from opentelemetry.trace import SpanKind

from tracerl import semconv

from .._values import as_text


def start_attributes(data) -> tuple[str, SpanKind, dict]:
    kind = getattr(data, "type", "custom")
    if kind == "agent":
        name = str(data.name)
        return (f"{semconv.OP_INVOKE_AGENT} {name}", SpanKind.INTERNAL,
                {semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT, semconv.GEN_AI_AGENT_NAME: name})
    if kind in ("response", "generation"):
        attrs = {semconv.GEN_AI_OPERATION_NAME: semconv.OP_CHAT, semconv.GEN_AI_PROVIDER_NAME: semconv.PROVIDER_OPENAI}
        model = getattr(data, "model", None)
        if model:
            attrs[semconv.GEN_AI_REQUEST_MODEL] = str(model)
        return (f"{semconv.OP_CHAT} {model}" if model else semconv.OP_CHAT), SpanKind.INTERNAL, attrs
    if kind == "function":
        name = str(data.name)
        return (f"{semconv.OP_EXECUTE_TOOL} {name}", SpanKind.INTERNAL,
                {semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL, semconv.GEN_AI_TOOL_NAME: name})
    if kind == "handoff":
        attrs = {}
        if getattr(data, "from_agent", None):
            attrs[semconv.HANDOFF_FROM_AGENT] = str(data.from_agent)
        return semconv.SPAN_HANDOFF, SpanKind.INTERNAL, attrs
    label = getattr(data, "name", None)
    return (f"{kind} {label}" if label else str(kind)), SpanKind.INTERNAL, {}


def end_attributes(data) -> tuple[str | None, dict]:
    """(a better span name now known, or None; attributes to add)."""
    kind = getattr(data, "type", "custom")
    if kind == "response":
        return _response(data)
    if kind == "generation":
        return None, _usage(getattr(data, "usage", None))
    if kind == "function":
        attrs = {}
        if getattr(data, "input", None) is not None:
            attrs[semconv.GEN_AI_TOOL_CALL_ARGUMENTS] = as_text(data.input)
        if getattr(data, "output", None) is not None:
            attrs[semconv.GEN_AI_TOOL_CALL_RESULT] = as_text(data.output if isinstance(data.output, str)
                                                             else str(data.output))
        return None, attrs
    if kind == "handoff":
        attrs = {}
        if getattr(data, "from_agent", None):
            attrs[semconv.HANDOFF_FROM_AGENT] = str(data.from_agent)
        if getattr(data, "to_agent", None):
            attrs[semconv.HANDOFF_TO_AGENT] = str(data.to_agent)
        return None, attrs
    return None, {}


def _response(data) -> tuple[str | None, dict]:
    response = getattr(data, "response", None)
    attrs = _usage(getattr(data, "usage", None))
    response_id = getattr(response, "id", None) or getattr(data, "_response_id", None)
    if response_id:
        attrs[semconv.GEN_AI_RESPONSE_ID] = str(response_id)
    model = getattr(response, "model", None)
    if model:
        attrs[semconv.GEN_AI_REQUEST_MODEL] = str(model)
        attrs[semconv.GEN_AI_RESPONSE_MODEL] = str(model)
    return (f"{semconv.OP_CHAT} {model}" if model else None), attrs


def _usage(usage) -> dict:
    attrs = {}
    if isinstance(usage, dict):
        if isinstance(usage.get("input_tokens"), int):
            attrs[semconv.GEN_AI_USAGE_INPUT_TOKENS] = usage["input_tokens"]
        if isinstance(usage.get("output_tokens"), int):
            attrs[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] = usage["output_tokens"]
    return attrs


def output_text(data) -> str | None:
    """The text a model call answered with (Responses ``output_text``, or the last assistant
    message of a chat-completions generation), or None for a call that only called tools."""
    response = getattr(data, "response", None)
    if response is not None:
        text = getattr(response, "output_text", None)
        return text or None
    for message in reversed(list(getattr(data, "output", None) or [])):
        if isinstance(message, dict) and message.get("content"):
            return str(message["content"])
    return None
