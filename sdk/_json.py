"""Compact, never-failing JSON for attribute values.

Attribute values that are not plain scalars (messages, tasks, variables, token id lists) go on
the wire as JSON strings, the way the ClickHouse exporter stores arrays and maps anyway. Tracing
must never raise into user code, so anything json cannot encode falls back to ``repr``.
"""

from __future__ import annotations

import json

DEFAULT_MAX_CHARS = 64 * 1024
_TRUNCATED = "...[truncated]"


def dumps(value, max_chars: int | None = DEFAULT_MAX_CHARS) -> str:
    """JSON text of ``value``; strings over ``max_chars`` are cut with a visible marker."""
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_default)
    except (TypeError, ValueError):
        text = json.dumps(repr(value), ensure_ascii=False)
    if max_chars is not None and len(text) > max_chars:
        text = text[: max_chars - len(_TRUNCATED)] + _TRUNCATED
    return text


def _default(obj):
    """Pydantic models (openai's types), dataclasses and sets encode as their fields."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True)
    if hasattr(obj, "__dataclass_fields__"):
        return {k: getattr(obj, k) for k in obj.__dataclass_fields__}
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return repr(obj)
