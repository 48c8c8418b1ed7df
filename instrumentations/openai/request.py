"""What a request says, as GenAI attributes; and the extra body that asks for token ids.

Kept apart from the response side so that each endpoint (chat, completions, responses) is one
small table of parameter names.
"""

from __future__ import annotations

from tracerl import config, semconv
from tracerl._json import dumps

from .messages import chat_input_messages, responses_input_messages

CHAT = "chat"
COMPLETIONS = "completions"
RESPONSES = "responses"

# request keyword -> attribute (numbers and strings only; anything else is skipped)
_SAMPLING = {
    "temperature": semconv.GEN_AI_REQUEST_TEMPERATURE,
    "top_p": semconv.GEN_AI_REQUEST_TOP_P,
    "max_tokens": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "max_completion_tokens": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "max_output_tokens": semconv.GEN_AI_REQUEST_MAX_TOKENS,
    "frequency_penalty": semconv.GEN_AI_REQUEST_FREQUENCY_PENALTY,
    "presence_penalty": semconv.GEN_AI_REQUEST_PRESENCE_PENALTY,
    "seed": semconv.GEN_AI_REQUEST_SEED,
    "n": semconv.GEN_AI_REQUEST_CHOICE_COUNT,
}

OPERATION = {CHAT: semconv.OP_CHAT, COMPLETIONS: semconv.OP_TEXT_COMPLETION, RESPONSES: semconv.OP_CHAT}


def request_attributes(endpoint: str, kwargs: dict, client) -> dict:
    model = kwargs.get("model")
    attrs = {
        semconv.GEN_AI_OPERATION_NAME: OPERATION[endpoint],
        semconv.GEN_AI_PROVIDER_NAME: semconv.PROVIDER_OPENAI,
    }
    if isinstance(model, str):
        attrs[semconv.GEN_AI_REQUEST_MODEL] = model
    for key, attr in _SAMPLING.items():
        value = kwargs.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            attrs[attr] = value
    stop = kwargs.get("stop")
    if isinstance(stop, str):
        attrs[semconv.GEN_AI_REQUEST_STOP_SEQUENCES] = (stop,)
    elif isinstance(stop, (list, tuple)) and all(isinstance(s, str) for s in stop):
        attrs[semconv.GEN_AI_REQUEST_STOP_SEQUENCES] = tuple(stop)
    if kwargs.get("stream") is True:
        attrs[semconv.GEN_AI_REQUEST_STREAM] = True
    _server(attrs, client)
    if endpoint == CHAT:
        messages = kwargs.get("messages")
        if messages is not None:
            attrs[semconv.GEN_AI_INPUT_MESSAGES] = dumps(chat_input_messages(messages))
    elif endpoint == COMPLETIONS:
        prompt = kwargs.get("prompt")
        if prompt is not None:
            attrs[semconv.GEN_AI_INPUT_MESSAGES] = dumps(
                [{"role": "user", "parts": [{"type": "text", "content": prompt}]}])
    else:
        if kwargs.get("input") is not None:
            attrs[semconv.GEN_AI_INPUT_MESSAGES] = dumps(responses_input_messages(kwargs["input"]))
        if isinstance(kwargs.get("instructions"), str):
            attrs[semconv.GEN_AI_SYSTEM_INSTRUCTIONS] = dumps(
                [{"type": "text", "content": kwargs["instructions"]}])
    return attrs


def _server(attrs: dict, client) -> None:
    """``server.*`` from the client's ``base_url`` (anything with ``host`` and ``port``: openai's
    client, or the gateway's upstream)."""
    url = getattr(client, "base_url", None)
    host = getattr(url, "host", None)
    if host:
        attrs[semconv.SERVER_ADDRESS] = host
        port = getattr(url, "port", None)
        if port:
            attrs[semconv.SERVER_PORT] = port


def span_name(endpoint: str, attrs: dict) -> str:
    """``chat <model>``, ``text_completion <model>``: the GenAI span name."""
    model = attrs.get(semconv.GEN_AI_REQUEST_MODEL)
    return f"{OPERATION[endpoint]} {model}" if model else OPERATION[endpoint]


def token_capture_fields(endpoint: str, params: dict) -> dict:
    """The request fields that ask a vLLM-style server for token ids and sampled-token logprobs,
    less what ``params`` sets itself. Shared by the client instrumentation (as extra body) and
    the gateway (into the JSON body it forwards), so both ask the server the same way."""
    fields = {"return_token_ids": True}
    if "logprobs" not in params:
        if endpoint == CHAT:
            fields["logprobs"] = True
        elif endpoint == COMPLETIONS:
            fields["logprobs"] = 1  # the completions API counts top logprobs: 1 = the sampled one
    return fields


def with_token_capture(endpoint: str, kwargs: dict) -> dict:
    """``kwargs`` with vLLM's ``return_token_ids`` (and logprobs) in the extra body, when
    capture is on. What the caller set explicitly is never overridden."""
    if not config.capture_tokens():
        return kwargs
    extra = dict(kwargs.get("extra_body") or {})
    for key, value in token_capture_fields(endpoint, kwargs).items():
        extra.setdefault(key, value)
    return {**kwargs, "extra_body": extra}
