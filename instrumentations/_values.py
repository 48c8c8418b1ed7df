"""Attribute values the framework plugins share: text for tool arguments and results, and the
``tracerl.variable`` event.

Tool arguments and results are text on the wire: a string stays as it is (a tool's result is
usually text already, and JSON-quoting it again would make the builder unquote it), anything
else becomes JSON. Both are capped, like every other value tracerl records.
"""

from __future__ import annotations

from tracerl import semconv
from tracerl._json import dumps

VALUE_MAX_CHARS = 16 * 1024
_TRUNCATED = "...[truncated]"


def as_text(value, max_chars: int = VALUE_MAX_CHARS) -> str:
    if isinstance(value, str):
        return value if len(value) <= max_chars else value[: max_chars - len(_TRUNCATED)] + _TRUNCATED
    return dumps(value, max_chars)


def add_variable(span, name: str, value) -> None:
    """A semantic variable as ``tracerl.variable`` event on ``span`` (value as JSON), as
    ``tracerl.emit_variable`` records it on the current span."""
    if span is not None and span.is_recording():
        span.add_event(semconv.EVENT_VARIABLE, {semconv.VARIABLE_NAME: name,
                                                semconv.VARIABLE_VALUE: dumps(value, VALUE_MAX_CHARS)})
