"""Token ids of a call: as the serving engine returned them, or re-tokenized as a fallback.

Ids captured from the engine are exactly what the model saw and produced, so they are used as
they are. Without them, a Hugging Face tokenizer from a local folder (``--tokenizer``) renders the
prompt with its chat template and encodes the response text; that is close to, but not surely,
what the model saw, so such a transition is flagged ``retokenized`` (never silently).
"""

from __future__ import annotations

from dataclasses import dataclass

from .conventions import LLMCall

FLAG_RETOKENIZED = "retokenized"
FLAG_NO_LOGPROBS = "no_logprobs"


@dataclass(slots=True)
class CallTokens:
    prompt_ids: list
    response_ids: list
    logprobs: list  # one per response id, or empty
    flags: tuple = ()


def captured_tokens(call: LLMCall) -> CallTokens | None:
    if not call.has_token_ids:
        return None
    logprobs = call.logprobs or []
    flags = ()
    if len(logprobs) != len(call.response_ids):
        logprobs, flags = [], (FLAG_NO_LOGPROBS,)
    return CallTokens(call.prompt_ids, call.response_ids, logprobs, flags)


class Retokenizer:
    """An HF tokenizer loaded from a local path (no download), with its chat template."""

    def __init__(self, path: str):
        from transformers import AutoTokenizer  # the [builder] extra; torch is not needed

        self.path = path
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)

    def tokens(self, call: LLMCall) -> CallTokens:
        if call.operation == "text_completion":
            prompt_text = "".join(_text(m) for m in call.input_messages)
            prompt_ids = self.tokenizer.encode(prompt_text, add_special_tokens=False)
        else:
            prompt_ids = self.tokenizer.apply_chat_template(
                chat_messages(call.input_messages), add_generation_prompt=True, tokenize=True)
            if isinstance(prompt_ids, dict) or hasattr(prompt_ids, "keys"):  # BatchEncoding in newer versions
                prompt_ids = prompt_ids["input_ids"]
        response_ids = self.tokenizer.encode(call.response_text, add_special_tokens=False)
        return CallTokens(list(prompt_ids), list(response_ids), [], (FLAG_RETOKENIZED, FLAG_NO_LOGPROBS))


def _text(message: dict) -> str:
    return "".join(p.get("content") or "" for p in message.get("parts", ()) if p.get("type") == "text")


def chat_messages(messages: list[dict]) -> list[dict]:
    """GenAI messages (role + parts) -> the ``{"role", "content", "tool_calls"}`` messages chat
    templates take."""
    out = []
    for m in messages:
        role = m.get("role") or "user"
        parts = m.get("parts") or []
        if role == "tool" or any(p.get("type") == "tool_call_response" for p in parts):
            for p in parts:
                response = p.get("response")
                out.append({"role": "tool", "tool_call_id": p.get("id") or "",
                            "content": response if isinstance(response, str) else str(response)})
            continue
        message = {"role": role, "content": _text(m)}
        calls = [{"id": p.get("id") or "", "type": "function",
                  "function": {"name": p.get("name") or "", "arguments": p.get("arguments")}}
                 for p in parts if p.get("type") == "tool_call"]
        if calls:
            message["tool_calls"] = calls
        out.append(message)
    return out
