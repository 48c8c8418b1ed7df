"""Token ids for training, without the agent noticing.

With ``--capture-tokens`` the gateway asks a vLLM-style upstream for token ids and logprobs (the
fields the OpenAI-client instrumentation adds to the extra body: `token_capture_fields`), and
then removes from the reply what the client did not ask for itself, so that the agent gets the
response it would have got without the gateway: no ``prompt_token_ids`` / ``token_ids`` /
``output_token_ids``, and ``logprobs: null`` as OpenAI writes it when logprobs were not asked.
"""

from __future__ import annotations

from tracerl.instrumentations.openai.request import token_capture_fields

RETURN_TOKEN_IDS = "return_token_ids"
LOGPROBS = "logprobs"
_TOP_LEVEL_IDS = ("prompt_token_ids", "output_token_ids")
_CHOICE_IDS = ("prompt_token_ids", "token_ids")


def inject(endpoint: str, body: dict) -> frozenset:
    """Add the capture fields the client did not set to ``body``; returns their names."""
    added = {k: v for k, v in token_capture_fields(endpoint, body).items() if k not in body}
    body.update(added)
    return frozenset(added)


def hide(reply: dict, added: frozenset) -> None:
    """Take out of a reply (or stream chunk) what only the gateway asked for. In place."""
    if RETURN_TOKEN_IDS in added:
        for key in _TOP_LEVEL_IDS:
            reply.pop(key, None)
    choices = reply.get("choices")
    if not isinstance(choices, list):
        return
    for choice in choices:
        if not isinstance(choice, dict):
            continue
        if RETURN_TOKEN_IDS in added:
            for key in _CHOICE_IDS:
                choice.pop(key, None)
        if LOGPROBS in added and LOGPROBS in choice:
            choice[LOGPROBS] = None
