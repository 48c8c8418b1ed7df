"""Export that can fail without the agent noticing.

A collector that is down or slow must cost the agent nothing: spans are exported from the batch
processor's thread, and when an export fails the batch is dropped and counted, with a warning
that says how many spans were lost so far. After a failure the exporter stays "open" for a short
cool-down and drops batches at once instead of retrying into a dead endpoint again and again, so
that the final flush at exit is quick as well.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

logger = logging.getLogger("tracerl.export")

COOL_DOWN_S = 5.0
WARN_EVERY_S = 10.0


class DropStats:
    """Process-wide counters, readable with `tracerl.export_stats()`."""

    def __init__(self):
        self._lock = threading.Lock()
        self.exported = 0
        self.dropped = 0
        self.failed_exports = 0

    def snapshot(self) -> dict:
        with self._lock:
            return {"exported": self.exported, "dropped": self.dropped,
                    "failed_exports": self.failed_exports}


STATS = DropStats()


class GuardedSpanExporter(SpanExporter):
    """Wraps an OTLP exporter: never raises, counts what it drops, backs off after a failure."""

    def __init__(self, inner: SpanExporter, target: str = "", cool_down_s: float = COOL_DOWN_S,
                 stats: DropStats = STATS):
        self.inner = inner
        self.target = target
        self.cool_down_s = cool_down_s
        self.stats = stats
        self._open_until = 0.0
        self._last_warning = 0.0
        self._shutdown = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        now = time.monotonic()
        if self._shutdown or now < self._open_until:
            self._drop(len(spans), "collector unreachable, skipping export")
            return SpanExportResult.FAILURE
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # an exporter bug must not reach the batch thread's caller
            logger.debug("span export raised", exc_info=True)
            result, reason = SpanExportResult.FAILURE, f"export raised {type(exc).__name__}"
        else:
            reason = "export failed"
        if result is SpanExportResult.SUCCESS:
            with self.stats._lock:
                self.stats.exported += len(spans)
            self._open_until = 0.0
            return result
        self._open_until = time.monotonic() + self.cool_down_s
        with self.stats._lock:
            self.stats.failed_exports += 1
        self._drop(len(spans), reason)
        return SpanExportResult.FAILURE

    def _drop(self, n: int, reason: str) -> None:
        with self.stats._lock:
            self.stats.dropped += n
            total = self.stats.dropped
        now = time.monotonic()
        if now - self._last_warning >= WARN_EVERY_S or self._last_warning == 0.0:
            self._last_warning = now
            logger.warning("tracerl dropped %d spans (%d so far): %s%s", n, total, reason,
                           f" ({self.target})" if self.target else "")

    def shutdown(self) -> None:
        """Called by the batch processor after its final flush: report any loss once more."""
        self._shutdown = True
        try:
            self.inner.shutdown()
        except Exception:
            logger.debug("exporter shutdown raised", exc_info=True)
        self.report_at_exit()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        try:
            return self.inner.force_flush(timeout_millis)
        except Exception:
            return False

    def report_at_exit(self) -> None:
        """One last line when spans were lost, so a silent loss is impossible."""
        snap = self.stats.snapshot()
        if snap["dropped"]:
            logger.warning("tracerl dropped %d spans in total in this process%s", snap["dropped"],
                           f" ({self.target})" if self.target else "")
