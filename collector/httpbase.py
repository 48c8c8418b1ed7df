"""A small threaded HTTP/1.1 server base shared by the OTLP/HTTP receiver and the query endpoint."""

from __future__ import annotations

import gzip
import logging
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log = logging.getLogger("tracerl.collector")


class BodyTooLarge(Exception):
    pass


class BadBody(Exception):
    pass


def _lz4_frames(raw: bytes, limit: int) -> bytes:
    """Decompress concatenated LZ4 frames (clickhouse-connect sends one frame per block)."""
    import lz4.frame

    parts, total = [], 0
    while raw:
        d = lz4.frame.LZ4FrameDecompressor()
        parts.append(d.decompress(raw))
        total += len(parts[-1])
        if total > limit:
            raise BodyTooLarge(f"decompressed body is over the limit of {limit} bytes")
        if not d.eof:
            raise BadBody("truncated lz4 body")
        raw = d.unused_data
    return b"".join(parts)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tracerl"
    max_body_bytes = 32 << 20

    def log_message(self, format, *args):  # noqa: A002 - stdlib signature
        log.debug("%s %s", self.address_string(), format % args)

    def send_body(self, status: int, body: bytes, content_type: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def read_body(self) -> bytes:
        """The request body, decompressed (gzip, deflate, lz4), within ``max_body_bytes``.

        Raises BodyTooLarge before reading anything when Content-Length is over the limit (the
        connection is then closed), and BadBody for a body that does not decode.
        """
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = self._read_chunked()
        else:
            try:
                n = int(length or 0)
            except ValueError:
                raise BadBody(f"bad Content-Length {length!r}") from None
            if n > self.max_body_bytes:
                self.close_connection = True
                raise BodyTooLarge(f"body of {n} bytes is over the limit of {self.max_body_bytes}")
            raw = self.rfile.read(n) if n else b""
            if len(raw) != n:
                self.close_connection = True
                raise BadBody(f"body ended after {len(raw)} of {n} bytes")
        return self._decode(raw, self.headers.get("Content-Encoding", "").lower().strip())

    def _read_chunked(self) -> bytes:
        parts, total = [], 0
        while True:
            line = self.rfile.readline(65537)
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                self.close_connection = True
                raise BadBody("malformed chunked encoding") from None
            if size == 0:
                self.rfile.readline()
                return b"".join(parts)
            total += size
            if total > self.max_body_bytes:
                self.close_connection = True
                raise BodyTooLarge(f"body is over the limit of {self.max_body_bytes} bytes")
            parts.append(self.rfile.read(size))
            self.rfile.readline()

    def _decode(self, raw: bytes, encoding: str) -> bytes:
        limit = self.max_body_bytes
        try:
            if encoding in ("", "identity"):
                return raw
            if encoding in ("gzip", "x-gzip", "deflate"):
                wbits = 16 + zlib.MAX_WBITS if encoding != "deflate" else zlib.MAX_WBITS
                d = zlib.decompressobj(wbits)
                out = d.decompress(raw, limit + 1)
                if len(out) > limit:
                    raise BodyTooLarge(f"decompressed body is over the limit of {limit} bytes")
                if not d.eof:
                    raise BadBody("truncated gzip body")
                return out
            if encoding == "lz4":
                out = _lz4_frames(raw, limit)
            else:
                raise BadBody(f"unsupported Content-Encoding {encoding!r}")
        except (zlib.error, gzip.BadGzipFile, RuntimeError, ValueError) as exc:
            raise BadBody(f"body does not decode as {encoding}: {exc}") from None
        if len(out) > limit:
            raise BodyTooLarge(f"decompressed body is over the limit of {limit} bytes")
        return out
