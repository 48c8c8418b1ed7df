"""LangChain's objects as attribute values: model-call attributes and JSON-ready inputs/outputs.

Kept apart from the handler so the handler reads as the run-to-span mapping only. Nothing here
raises on unexpected shapes: LangChain's payloads vary by model and version, and a missing
field must cost an attribute, never the call.
"""

from __future__ import annotations

from tracerl import semconv

_SAMPLING = {
    "temperature": semconv.GEN_AI_REQUEST_TEMPERATURE,
    "top_p": semconv.GEN_AI_REQUEST_TOP_P,
    "max_tokens": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "max_completion_tokens": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "seed": semconv.GEN_AI_REQUEST_SEED,
}


def chat_attributes(operation: str, params: dict, metadata: dict) -> dict:
    """Request attributes of the framework's model-call span, from LangChain's invocation
    params (``model``/``model_name``, sampling) and tracing metadata (``ls_provider``)."""
    attrs = {semconv.GEN_AI_OPERATION_NAME: operation}
    model = params.get("model") or params.get("model_name") or metadata.get("ls_model_name")
    if model:
        attrs[semconv.GEN_AI_REQUEST_MODEL] = str(model)
    provider = metadata.get("ls_provider")
    if provider:
        attrs[semconv.GEN_AI_PROVIDER_NAME] = str(provider)
    for key, attr in _SAMPLING.items():
        value = params.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            attrs[attr] = value
    return attrs


def llm_result_attributes(result) -> dict:
    """Response id, model, finish reason and usage of the first generation of an ``LLMResult``.
    The response id is what ties this span to the OpenAI-client span of the same call."""
    attrs = {}
    output = getattr(result, "llm_output", None) or {}
    generations = getattr(result, "generations", None) or []
    first = generations[0][0] if generations and generations[0] else None
    message = getattr(first, "message", None)
    meta = dict(getattr(message, "response_metadata", None) or {})
    info = getattr(first, "generation_info", None) or {}
    response_id = meta.get("id") or output.get("id")
    if response_id:
        attrs[semconv.GEN_AI_RESPONSE_ID] = str(response_id)
    model = meta.get("model_name") or output.get("model_name")
    if model:
        attrs[semconv.GEN_AI_RESPONSE_MODEL] = str(model)
    finish = meta.get("finish_reason") or info.get("finish_reason")
    if finish:
        attrs[semconv.GEN_AI_RESPONSE_FINISH_REASONS] = [str(finish)]
    usage = getattr(message, "usage_metadata", None) or {}
    if usage.get("input_tokens") is not None:
        attrs[semconv.GEN_AI_USAGE_INPUT_TOKENS] = int(usage["input_tokens"])
    if usage.get("output_tokens") is not None:
        attrs[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] = int(usage["output_tokens"])
    return attrs


def plain(value, depth: int = 0):
    """``value`` with LangChain messages turned into small ``{"role", "content", ...}`` dicts,
    so variables read like the GenAI messages of the LLM spans rather than pydantic dumps."""
    if depth > 20:
        return repr(value)
    if _is_message(value):
        out = {"role": getattr(value, "type", "message"), "content": plain(value.content, depth + 1)}
        for key in ("name", "tool_call_id"):
            if getattr(value, key, None):
                out[key] = getattr(value, key)
        calls = getattr(value, "tool_calls", None)
        if calls:
            out["tool_calls"] = [{"name": c.get("name"), "arguments": c.get("args"), "id": c.get("id")}
                                 for c in calls]
        return out
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    return value


def _is_message(value) -> bool:
    return hasattr(value, "content") and hasattr(value, "type") and hasattr(value, "response_metadata")
