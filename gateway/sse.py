"""Server-sent events, split as they arrive.

An upstream's stream arrives in arbitrary pieces; the gateway forwards the pieces at once and
hands each complete event (ended by a blank line) to the recorder. When it must rewrite events
(to hide token ids the client did not ask for), it forwards whole events instead, rewritten.
"""

from __future__ import annotations

_SEPARATORS = (b"\n\n", b"\r\n\r\n")
DONE = b"[DONE]"


class EventSplitter:
    def __init__(self):
        self._buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        """The events completed by ``data``, each with its terminating blank line."""
        self._buffer += data
        events = []
        while True:
            cut, sep = -1, b""
            for candidate in _SEPARATORS:
                i = self._buffer.find(candidate)
                if i >= 0 and (cut < 0 or i < cut):
                    cut, sep = i, candidate
            if cut < 0:
                return events
            end = cut + len(sep)
            events.append(self._buffer[:end])
            self._buffer = self._buffer[end:]

    def rest(self) -> bytes:
        """What came after the last complete event (a stream cut short, or no final blank line)."""
        rest, self._buffer = self._buffer, b""
        return rest


def data_of(event: bytes) -> bytes | None:
    """The event's data (its ``data:`` lines joined by newlines), or None when it has none."""
    lines = [line[5:].lstrip(b" ") if line.startswith(b"data:") else None for line in event.splitlines()]
    data = [line for line in lines if line is not None]
    return b"\n".join(data) if data else None


def with_data(event: bytes, data: bytes) -> bytes:
    """``event`` with its data replaced; other fields (``event:``, ``id:``) kept in place."""
    out, replaced = [], False
    for line in event.splitlines():
        if line.startswith(b"data:"):
            if not replaced:
                out.append(b"data: " + data)
                replaced = True
        elif line:
            out.append(line)
    return b"\n".join(out) + b"\n\n"

