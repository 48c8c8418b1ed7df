"""LLM-call spans of the conventions found in the wild, normalized into one `LLMCall` record.

- OpenTelemetry GenAI: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` JSON (role + parts);
- the older flattened GenAI form (OpenLLMetry): ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``;
- OpenInference: ``openinference.span.kind = LLM``, ``llm.input_messages.N.message.*``.
Whichever recorded the call, tracerl's token-id attributes are read the same way. Messages come
out in the GenAI shape (``{"role", "parts": [{"type": "text", "content"}, {"type": "tool_call",
...}, {"type": "tool_call_response", ...}]}``) so the rest of the builder knows one shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

from tracerl import semconv

from .spans import Span

LLM_OPERATIONS = (semconv.OP_CHAT, semconv.OP_TEXT_COMPLETION, semconv.OP_GENERATE_CONTENT)


@dataclass(slots=True)
class LLMCall:
    span: Span
    convention: str  # genai | genai_flattened | openinference
    operation: str = semconv.OP_CHAT
    model: str = ""
    response_id: str = ""
    _messages: tuple | None = None  # (input, output), read on first use: most builds need only ids
    prompt_ids: list | None = None
    response_ids: list | None = None
    logprobs: list | None = None
    agent: str = ""

    @property
    def input_messages(self) -> list:
        return self._read_messages()[0]

    @property
    def output_messages(self) -> list:
        return self._read_messages()[1]

    def _read_messages(self) -> tuple:
        if self._messages is None:
            self._messages = READERS[self.convention](self.span.attrs)
        return self._messages

    @property
    def has_token_ids(self) -> bool:
        return bool(self.prompt_ids) and self.response_ids is not None

    @property
    def response_text(self) -> str:
        return "".join(p.get("content") or "" for m in self.output_messages for p in m.get("parts", ())
                       if p.get("type") == "text")


def convention_of(span: Span) -> str | None:
    """Which convention recorded ``span`` as an LLM call, or None if it is no LLM call."""
    a = span.attrs
    if a.get(semconv.OPENINFERENCE_SPAN_KIND) == semconv.OPENINFERENCE_KIND_LLM:
        return "openinference"
    if (a.get(semconv.GEN_AI_OPERATION_NAME) in LLM_OPERATIONS
            or a.get(semconv.LLM_REQUEST_TYPE) in ("chat", "completion")):
        if semconv.GEN_AI_INPUT_MESSAGES in a or semconv.GEN_AI_OUTPUT_MESSAGES in a:
            return "genai"
        if any(k.startswith((semconv.GEN_AI_PROMPT_PREFIX, semconv.GEN_AI_COMPLETION_PREFIX)) for k in a):
            return "genai_flattened"
        return "genai"
    return None


def agent_name_of(span: Span) -> str | None:
    """The agent name of an agent span (GenAI ``invoke_agent`` or OpenInference ``AGENT``)."""
    a = span.attrs
    if a.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_INVOKE_AGENT:
        return a.get(semconv.GEN_AI_AGENT_NAME) or span.name
    if a.get(semconv.OPENINFERENCE_SPAN_KIND) == semconv.OPENINFERENCE_KIND_AGENT:
        return a.get(semconv.OPENINFERENCE_AGENT_NAME) or a.get(semconv.GEN_AI_AGENT_NAME) or span.name
    return None


def normalize(span: Span, convention: str) -> LLMCall:
    call = LLMCall(span=span, convention=convention)
    a = span.attrs
    call.operation = a.get(semconv.GEN_AI_OPERATION_NAME) or (
        semconv.OP_TEXT_COMPLETION if a.get(semconv.LLM_REQUEST_TYPE) == "completion" else semconv.OP_CHAT)
    call.model = (a.get(semconv.GEN_AI_REQUEST_MODEL) or a.get(semconv.OPENINFERENCE_MODEL_NAME)
                  or a.get(semconv.GEN_AI_RESPONSE_MODEL) or "")
    call.response_id = a.get(semconv.GEN_AI_RESPONSE_ID) or ""
    call.prompt_ids = _json_list(a.get(semconv.LLM_PROMPT_TOKEN_IDS))
    call.response_ids = _json_list(a.get(semconv.LLM_RESPONSE_TOKEN_IDS))
    call.logprobs = _json_list(a.get(semconv.LLM_RESPONSE_LOGPROBS))
    return call


def _json_list(text):
    if not text:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, list) else None


def _json(text, default):
    if not text:
        return default
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return default


# --- OpenTelemetry GenAI ----------------------------------------------------------------------

def _read_genai(a: dict) -> tuple[list, list]:
    system = _json(a.get(semconv.GEN_AI_SYSTEM_INSTRUCTIONS), None)
    messages = _json(a.get(semconv.GEN_AI_INPUT_MESSAGES), [])
    if isinstance(system, list) and system:
        messages = [{"role": "system", "parts": system}, *messages]
    return ([m for m in messages if isinstance(m, dict)],
            [m for m in _json(a.get(semconv.GEN_AI_OUTPUT_MESSAGES), []) if isinstance(m, dict)])


# --- flattened GenAI (gen_ai.prompt.N.* / gen_ai.completion.N.*) ------------------------------

_INDEXED = re.compile(r"^(\d+)\.(.+)$")


def _indexed(a: dict, prefix: str) -> list[dict]:
    """``{prefix}N.rest = v`` attributes -> ``[{rest: v, ...} for N in order]``."""
    groups: dict[int, dict] = {}
    for key, value in a.items():
        if key.startswith(prefix):
            m = _INDEXED.match(key[len(prefix):])
            if m:
                groups.setdefault(int(m.group(1)), {})[m.group(2)] = value
    return [groups[i] for i in sorted(groups)]


def _flat_message(fields: dict, default_role: str) -> dict:
    parts = []
    if fields.get("content"):
        parts.append({"type": "text", "content": fields["content"]})
    for call in _indexed(fields, "tool_calls."):
        parts.append({"type": "tool_call", "id": call.get("id"), "name": call.get("name"),
                      "arguments": _json(call.get("arguments"), call.get("arguments"))})
    role = fields.get("role") or default_role
    if role == "tool":
        parts = [{"type": "tool_call_response", "id": fields.get("tool_call_id"), "response": fields.get("content")}]
    message = {"role": role, "parts": parts}
    if fields.get("finish_reason"):
        message["finish_reason"] = fields["finish_reason"]
    return message


def _read_flattened(a: dict) -> tuple[list, list]:
    return ([_flat_message(f, "user") for f in _indexed(a, semconv.GEN_AI_PROMPT_PREFIX)],
            [_flat_message(f, "assistant") for f in _indexed(a, semconv.GEN_AI_COMPLETION_PREFIX)])


# --- OpenInference (llm.input_messages.N.message.*) --------------------------------------------

def _oi_message(fields: dict) -> dict:
    role = fields.get("message.role") or "user"
    parts = []
    if fields.get("message.content"):
        parts.append({"type": "text", "content": fields["message.content"]})
    for content in _indexed(fields, "message.contents."):
        if content.get("message_content.text"):
            parts.append({"type": "text", "content": content["message_content.text"]})
    for tool_call in _indexed(fields, "message.tool_calls."):
        parts.append({"type": "tool_call", "id": tool_call.get("tool_call.id"),
                      "name": tool_call.get("tool_call.function.name"),
                      "arguments": _json(tool_call.get("tool_call.function.arguments"),
                                         tool_call.get("tool_call.function.arguments"))})
    if role == "tool":
        parts = [{"type": "tool_call_response", "id": fields.get("message.tool_call_id"),
                  "response": fields.get("message.content")}]
    return {"role": role, "parts": parts}


def _read_openinference(a: dict) -> tuple[list, list]:
    return ([_oi_message(f) for f in _indexed(a, semconv.OPENINFERENCE_INPUT_MESSAGES)],
            [_oi_message(f) for f in _indexed(a, semconv.OPENINFERENCE_OUTPUT_MESSAGES)])


READERS = {"genai": _read_genai, "genai_flattened": _read_flattened, "openinference": _read_openinference}
