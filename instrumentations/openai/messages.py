"""OpenAI message shapes -> the GenAI semantic conventions' message JSON.

``gen_ai.input.messages`` / ``gen_ai.output.messages`` hold ``[{"role", "parts": [...]}]`` with
parts ``text``, ``tool_call`` (id, name, arguments) and ``tool_call_response`` (id, response).
Messages may be dicts (request parameters) or openai's pydantic objects (a previous response's
message passed back in), so every read goes through `get`.
"""

from __future__ import annotations

import json


def get(obj, key, default=None):
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _arguments(raw):
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _content_parts(content) -> list:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts = []
    for part in content:
        kind = get(part, "type")
        text = get(part, "text")
        if kind in ("text", "input_text", "output_text") and text is not None:
            parts.append({"type": "text", "content": text})
        elif kind == "refusal":
            parts.append({"type": "text", "content": get(part, "refusal")})
        elif isinstance(part, str):
            parts.append({"type": "text", "content": part})
        else:
            parts.append({"type": kind or "unknown"})  # images, audio, files: kind only, no payload
    return parts


def tool_call_part(call) -> dict:
    fn = get(call, "function")
    return {"type": "tool_call", "id": get(call, "id"), "name": get(fn, "name"),
            "arguments": _arguments(get(fn, "arguments"))}


def chat_message(message) -> dict:
    role = get(message, "role") or "user"
    if role == "tool":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": get(message, "tool_call_id"),
                                           "response": get(message, "content")}]}
    parts = _content_parts(get(message, "content"))
    for call in get(message, "tool_calls") or ():
        parts.append(tool_call_part(call))
    return {"role": role, "parts": parts}


def chat_input_messages(messages) -> list:
    return [chat_message(m) for m in messages]


def responses_input_messages(items) -> list:
    if isinstance(items, str):
        return [{"role": "user", "parts": [{"type": "text", "content": items}]}]
    out = []
    for item in items:
        kind = get(item, "type")
        if kind == "function_call":
            out.append({"role": "assistant", "parts": [
                {"type": "tool_call", "id": get(item, "call_id"), "name": get(item, "name"),
                 "arguments": _arguments(get(item, "arguments"))}]})
        elif kind == "function_call_output":
            out.append({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": get(item, "call_id"), "response": get(item, "output")}]})
        elif kind in (None, "message"):
            out.append({"role": get(item, "role") or "user", "parts": _content_parts(get(item, "content"))})
        else:
            out.append({"role": "assistant", "parts": [{"type": kind}]})
    return out


def responses_output_messages(output, finish_reason) -> list:
    """The items of a Responses API output as one assistant message."""
    parts = []
    for item in output or ():
        kind = get(item, "type")
        if kind == "message":
            parts.extend(_content_parts(get(item, "content")))
        elif kind == "function_call":
            parts.append({"type": "tool_call", "id": get(item, "call_id"), "name": get(item, "name"),
                          "arguments": _arguments(get(item, "arguments"))})
        elif kind == "reasoning":
            summary = [get(s, "text") for s in get(item, "summary") or ()]
            parts.append({"type": "reasoning", "content": "\n".join(t for t in summary if t)})
        elif kind:
            parts.append({"type": kind})
    return [{"role": "assistant", "parts": parts, "finish_reason": finish_reason}]
