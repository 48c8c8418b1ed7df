"""Server-sent events, split as they arrive.

An upstream's stream arrives in arbitrary pieces; the gateway forwards the pieces at once and
hands each complete event (ended by a blank line) to the recorder. When it must rewrite events
(to hide token ids the client did not ask for), it forwards whole events instead, rewritten.
"""

from __future__ import annotations

DONE = b"[DONE]"


class EventSplitter:
    def __init__(self):
        self._buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        """The events completed by ``data``, each with its terminating blank line. One pass over
        the bytes (a piece often holds a hundred events: no re-scanning, no copying per event)."""
        buf = self._buffer + data if self._buffer else data
        crlf = b"\r" in buf
        events, start = [], 0
        while True:
            cut, size = buf.find(b"\n\n", start), 2
            if crlf:
                other = buf.find(b"\r\n\r\n", start)
                if other >= 0 and (cut < 0 or other < cut):
                    cut, size = other, 4
            if cut < 0:
                break
            events.append(buf[start:cut + size])
            start = cut + size
        self._buffer = buf[start:]
        return events

    def rest(self) -> bytes:
        """What came after the last complete event (a stream cut short, or no final blank line)."""
        rest, self._buffer = self._buffer, b""
        return rest


def data_of(event: bytes) -> bytes | None:
    """The event's data (its ``data:`` lines joined by newlines), or None when it has none."""
    if event.startswith(b"data: ") and event.endswith(b"\n\n") and event.count(b"\n") == 2:
        return event[6:-2]  # the usual event, one data line: no splitting
    lines = [line[5:].lstrip(b" ") if line.startswith(b"data:") else None for line in event.splitlines()]
    data = [line for line in lines if line is not None]
    return b"\n".join(data) if data else None


def with_data(event: bytes, data: bytes) -> bytes:
    """``event`` with its data replaced; other fields (``event:``, ``id:``) kept in place."""
    if event.startswith(b"data: ") and event.count(b"\n") == 2:
        return b"data: " + data + b"\n\n"
    out, replaced = [], False
    for line in event.splitlines():
        if line.startswith(b"data:"):
            if not replaced:
                out.append(b"data: " + data)
                replaced = True
        elif line:
            out.append(line)
    return b"\n".join(out) + b"\n\n"

