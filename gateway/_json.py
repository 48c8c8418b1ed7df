"""JSON on the gateway's hot path (every request body, reply and stream event is parsed, and
rewritten when token fields are hidden): orjson when installed (the ``[gateway]`` extra brings
it; about four times faster here), else the standard library. Whatever orjson refuses and the
standard library accepts (``NaN``, integers beyond 64 bits) still goes through, by the slow path."""

from __future__ import annotations

import json

try:
    import orjson
except ImportError:  # pragma: no cover - the extra installs it
    orjson = None


def loads(data: bytes):
    """Raises ValueError for what is not JSON."""
    if orjson is not None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


def dumps(value) -> bytes:
    """Compact JSON bytes."""
    if orjson is not None:
        try:
            return orjson.dumps(value)
        except TypeError:
            pass
    return json.dumps(value, separators=(",", ":")).encode()
