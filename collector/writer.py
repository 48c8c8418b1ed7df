"""Group commit: one writer thread turns many concurrent exports into few large inserts.

A request thread decodes its spans, hands the rows to :meth:`BatchWriter.submit` and waits on
the returned future; the export is acknowledged only when that future says its rows are in the
store. A writer thread takes everything queued (up to a row and byte budget) and inserts it as
one statement, so throughput comes from batching across requests, never from answering early.

An insert into the traces table has a fixed latency of 10-20 ms on this kind of machine (a new
part for the table and one for the lookup view, whatever the row count), so a few writer threads
insert side by side: while one waits on its part, another batch is already going in.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

from tracerl.store.engine import Engine

log = logging.getLogger("tracerl.collector")


class StoreUnavailable(RuntimeError):
    """The store refused or failed an insert; exporters should retry (503 / UNAVAILABLE)."""


@dataclass
class _Pending:
    payload: bytes  # a JSON array of row objects
    rows: int
    future: Future = field(default_factory=Future)


@dataclass
class WriterStats:
    batches: int = 0
    rows: int = 0
    failed_batches: int = 0
    insert_seconds: float = 0.0


class BatchWriter:
    def __init__(self, engine: Engine, statement: str, max_batch_rows: int = 100_000,
                 max_batch_bytes: int = 64 << 20, linger_s: float = 0.02,
                 arriving: Callable[[], int] = lambda: 0, threads: int = 1):
        self.engine = engine
        self.statement = statement  # INSERT INTO db.table (columns)
        self.max_batch_rows = max_batch_rows
        self.max_batch_bytes = max_batch_bytes
        self.linger_s = linger_s
        self.arriving = arriving  # requests admitted and still decoding: they will submit soon
        self.stats = WriterStats()
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._closed = False
        self._stats_lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, name=f"tracerl-writer-{i}", daemon=True)
                         for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def submit(self, payload: bytes, rows: int) -> Future:
        """Queue one request's rows; the future resolves when they are stored (or failed)."""
        pending = _Pending(payload, rows)
        if self._closed:
            pending.future.set_exception(StoreUnavailable("collector is shutting down"))
        elif rows == 0:
            pending.future.set_result(0)
        else:
            self._queue.put(pending)
        return pending.future

    def close(self, timeout: float | None = None) -> None:
        """Stop taking rows, write everything already queued, then stop the thread."""
        self._closed = True
        for _ in self._threads:
            self._queue.put(None)
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def _take_batch(self, first: _Pending) -> tuple[list[_Pending], bool]:
        batch, rows, size = [first], first.rows, len(first.payload)
        deadline = time.monotonic() + self.linger_s
        stop = False
        while rows < self.max_batch_rows and size < self.max_batch_bytes:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                # Each insert has a fixed cost (a new part, its indexes, the view), so wait for
                # the requests already being decoded to join this batch, up to linger_s.
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.arriving() == 0:
                    break
                try:
                    item = self._queue.get(timeout=min(remaining, 0.001))
                except queue.Empty:
                    continue
            if item is None:
                stop = True  # this thread's stop signal: write what it holds, then end
                break
            batch.append(item)
            rows += item.rows
            size += len(item.payload)
        return batch, stop

    def _insert(self, batch: list[_Pending]) -> None:
        if len(batch) == 1:
            data = batch[0].payload
        else:  # concatenate JSON arrays: [a,b] + [c] -> [a,b,c]
            data = b"[" + b",".join(p.payload[1:-1] for p in batch) + b"]"
        self.engine.insert(self.statement, "JSONEachRow", data)

    def _write(self, batch: list[_Pending]) -> None:
        started = time.perf_counter()
        try:
            self._insert(batch)
        except Exception as exc:  # noqa: BLE001 - any store failure becomes an error to the exporter
            if len(batch) > 1:
                # One bad request must not fail its neighbours: retry each on its own.
                for pending in batch:
                    self._write([pending])
                return
            with self._stats_lock:
                self.stats.failed_batches += 1
            log.warning("insert of %d rows failed: %s", batch[0].rows, exc)
            batch[0].future.set_exception(StoreUnavailable(str(exc)))
            return
        with self._stats_lock:
            self.stats.batches += 1
            self.stats.insert_seconds += time.perf_counter() - started
            self.stats.rows += sum(p.rows for p in batch)
        for pending in batch:
            pending.future.set_result(pending.rows)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                break
            batch, stop = self._take_batch(first)
            self._write(batch)
            if stop:
                break
        # Drain whatever raced in before close() flipped the flag; other threads' stop signals
        # met on the way go back in the queue for them.
        leftovers, signals = [], 0
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                signals += 1
            else:
                leftovers.append(item)
        for _ in range(signals):
            self._queue.put(None)
        if leftovers:
            self._write(leftovers)
