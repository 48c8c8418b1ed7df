"""What came back, as GenAI attributes plus the token ids and logprobs training needs.

Every endpoint and the stream accumulators first reduce a reply to an `Outcome`; one function
turns an `Outcome` into attributes. Token ids and logprobs are read where vLLM puts them
(``prompt_token_ids`` at the top level or per choice, ``choices[i].token_ids``,
``choices[i].logprobs.content[].logprob``); openai's models keep such unknown fields as extras,
so plain attribute access finds them without a ``model_dump`` of the whole reply.
Only the first choice's tokens are recorded when ``n > 1``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from tracerl import semconv
from tracerl._json import dumps

from .messages import chat_message, get, responses_output_messages


@dataclass
class Outcome:
    response_id: str | None = None
    model: str | None = None
    finish_reasons: list = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    output_messages: list | None = None
    prompt_token_ids: list | None = None
    response_token_ids: list | None = None
    logprobs: list | None = None


def attributes(o: Outcome) -> dict:
    attrs = {}
    if o.response_id:
        attrs[semconv.GEN_AI_RESPONSE_ID] = o.response_id
    if o.model:
        attrs[semconv.GEN_AI_RESPONSE_MODEL] = o.model
    if o.finish_reasons:
        attrs[semconv.GEN_AI_RESPONSE_FINISH_REASONS] = tuple(str(r) for r in o.finish_reasons)
    if isinstance(o.input_tokens, int):
        attrs[semconv.GEN_AI_USAGE_INPUT_TOKENS] = o.input_tokens
    if isinstance(o.output_tokens, int):
        attrs[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] = o.output_tokens
    if o.output_messages is not None:
        attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = dumps(o.output_messages)
    # Token ids are never truncated: a cut list is worse than none for training.
    if o.prompt_token_ids:
        attrs[semconv.LLM_PROMPT_TOKEN_IDS] = json.dumps(list(o.prompt_token_ids), separators=(",", ":"))
    if o.response_token_ids:
        attrs[semconv.LLM_RESPONSE_TOKEN_IDS] = json.dumps(list(o.response_token_ids), separators=(",", ":"))
    if o.logprobs:
        attrs[semconv.LLM_RESPONSE_LOGPROBS] = json.dumps(list(o.logprobs), separators=(",", ":"))
    return attrs


def _usage(o: Outcome, usage) -> None:
    if usage is None:
        return
    o.input_tokens = get(usage, "prompt_tokens", get(usage, "input_tokens"))
    o.output_tokens = get(usage, "completion_tokens", get(usage, "output_tokens"))


def token_logprobs(logprobs) -> list | None:
    """Sampled-token logprobs from a chat ``logprobs.content`` or a completions
    ``logprobs.token_logprobs``."""
    if logprobs is None:
        return None
    content = get(logprobs, "content")
    if content:
        if isinstance(content[0], dict):
            return [t.get("logprob") for t in content]
        return [t.logprob for t in content]  # openai's models: plain attribute access is fastest
    legacy = get(logprobs, "token_logprobs")
    return list(legacy) if legacy else None


def chat_outcome(resp) -> Outcome:
    o = Outcome(response_id=get(resp, "id"), model=get(resp, "model"))
    choices = get(resp, "choices") or []
    messages = []
    for choice in choices:
        message = chat_message(get(choice, "message"))
        message["role"] = "assistant"
        message["finish_reason"] = get(choice, "finish_reason")
        messages.append(message)
        o.finish_reasons.append(get(choice, "finish_reason") or "")
    o.output_messages = messages
    _usage(o, get(resp, "usage"))
    _tokens(o, resp, choices)
    return o


def completion_outcome(resp) -> Outcome:
    o = Outcome(response_id=get(resp, "id"), model=get(resp, "model"))
    choices = get(resp, "choices") or []
    o.output_messages = [{"role": "assistant", "parts": [{"type": "text", "content": get(c, "text")}],
                          "finish_reason": get(c, "finish_reason")} for c in choices]
    o.finish_reasons = [get(c, "finish_reason") or "" for c in choices]
    _usage(o, get(resp, "usage"))
    _tokens(o, resp, choices)
    return o


def _tokens(o: Outcome, resp, choices) -> None:
    o.prompt_token_ids = get(resp, "prompt_token_ids")
    if choices:
        first = choices[0]
        o.prompt_token_ids = o.prompt_token_ids or get(first, "prompt_token_ids")
        o.response_token_ids = get(first, "token_ids")
        o.logprobs = token_logprobs(get(first, "logprobs"))


def responses_outcome(resp) -> Outcome:
    status = get(resp, "status")
    incomplete = get(resp, "incomplete_details")
    finish = get(incomplete, "reason") if incomplete is not None else None
    finish = finish or ("stop" if status == "completed" else status)
    output = get(resp, "output") or []
    o = Outcome(response_id=get(resp, "id"), model=get(resp, "model"),
                finish_reasons=[finish] if finish else [],
                output_messages=responses_output_messages(output, finish))
    _usage(o, get(resp, "usage"))
    o.prompt_token_ids = get(resp, "prompt_token_ids")
    o.response_token_ids = get(resp, "output_token_ids")
    logprobs = []
    for item in output:
        for part in get(item, "content") or ():
            for token in get(part, "logprobs") or ():
                logprobs.append(get(token, "logprob"))
    o.logprobs = logprobs or None
    return o


OUTCOME = {"chat": chat_outcome, "completions": completion_outcome, "responses": responses_outcome}
