"""Switches read at call time by tracerl's instrumentors.

They live here, not on the instrumentor objects, so that ``tracerl.init(capture_tokens=...)``,
the environment and ``opentelemetry-instrument`` all reach the same place.
"""

from __future__ import annotations

import os

from . import semconv

_TRUE = {"1", "true", "yes", "on"}
_capture_tokens: bool | None = None


def set_capture_tokens(value: bool | None) -> None:
    """Override ``TRACERL_CAPTURE_TOKENS`` for this process (None: back to the environment)."""
    global _capture_tokens
    _capture_tokens = None if value is None else bool(value)


def capture_tokens() -> bool:
    """Whether to ask the server for token ids and logprobs (vLLM's ``return_token_ids``).

    Off by default: providers other than vLLM-style servers reject unknown request fields.
    """
    if _capture_tokens is not None:
        return _capture_tokens
    return os.environ.get(semconv.ENV_CAPTURE_TOKENS, "").strip().lower() in _TRUE
