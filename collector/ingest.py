"""What every receiver shares: authentication, admission (in-flight limit) and the export path
from a decoded request to stored rows."""

from __future__ import annotations

import hmac
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Callable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from .otlp import to_rows
from .writer import BatchWriter, StoreUnavailable


class Busy(Exception):
    """Too many exports in flight."""


class ShuttingDown(Exception):
    """The collector is stopping and takes no new exports."""


class Ingest:
    def __init__(self, writer: BatchWriter, max_inflight: int = 64, token: str = "",
                 max_body_bytes: int = 32 << 20, ack_timeout_s: float = 30.0, decode_threads: int = 2):
        self.writer = writer
        writer.arriving = lambda: self.decoding
        self.max_inflight = max_inflight
        self.token = token
        self.max_body_bytes = max_body_bytes
        self.ack_timeout_s = ack_timeout_s
        self._inflight = 0
        self.decoding = 0  # admitted requests that have not reached the writer yet
        self.decode_seconds = 0.0
        self._idle = threading.Condition()
        self._request = threading.local()  # one request per receiver thread at a time
        # Decoding is pure Python: more threads at it than cores only fight over the GIL.
        self._decode_slots = threading.BoundedSemaphore(decode_threads)
        self.closing = False
        self.rejected_busy = 0

    def authorized(self, authorization: str | None) -> bool:
        """Without a configured token everything is allowed; with one, ``Bearer <token>``."""
        if not self.token:
            return True
        return bool(authorization) and hmac.compare_digest(authorization, f"Bearer {self.token}")

    def admit(self) -> None:
        """Take an in-flight slot, or raise Busy (429 / RESOURCE_EXHAUSTED) or ShuttingDown (503)."""
        with self._idle:
            if self.closing:
                raise ShuttingDown("collector is shutting down; retry against its successor")
            if self._inflight >= self.max_inflight:
                self.rejected_busy += 1
                raise Busy(f"too many exports in flight (limit {self.max_inflight}); retry later")
            self._inflight += 1
            self.decoding += 1
            self._request.decoding = True

    def submitted(self) -> None:
        """This thread's request reached the writer (or failed before): the writer need not wait
        for it any more."""
        with self._idle:
            if getattr(self._request, "decoding", False):
                self._request.decoding = False
                self.decoding -= 1

    def release(self) -> None:
        self.submitted()  # a request that failed before export() also stops counting as arriving
        with self._idle:
            self._inflight -= 1
            if self._inflight == 0:
                self._idle.notify_all()

    def close(self, timeout: float) -> bool:
        """Refuse new exports and wait for the running ones; False if some were still running."""
        with self._idle:
            self.closing = True
            return self._idle.wait_for(lambda: self._inflight == 0, timeout)

    def export(self, decode: Callable[[], ExportTraceServiceRequest]) -> int:
        """Decode a request with ``decode()`` and store its spans; returns their count once they
        are in the store.

        Raises InvalidPayload (nothing stored) or StoreUnavailable (retry), or whatever
        ``decode`` raises for a body it cannot read.
        """
        try:
            with self._decode_slots:
                started = time.perf_counter()
                payload, rows = to_rows(decode())
                self.decode_seconds += time.perf_counter() - started
            future = self.writer.submit(payload, rows)
        finally:
            self.submitted()
        try:
            return future.result(timeout=self.ack_timeout_s)
        except FutureTimeout:
            raise StoreUnavailable(f"store did not confirm the insert within {self.ack_timeout_s:g}s") from None
