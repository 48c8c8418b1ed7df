"""Group commit: concurrent submissions share inserts; one bad request does not fail its batch."""

import threading

import pytest

from tracerl.collector.writer import BatchWriter, StoreUnavailable
from tracerl.store.engine import EngineQueryError


class RecordingEngine:
    """Stands in for the store to observe how the writer groups and isolates inserts."""

    def __init__(self, delay: float = 0.0):
        self.inserts: list[bytes] = []
        self.delay = delay
        self.gate = threading.Event()
        self.gate.set()

    def insert(self, statement, fmt, data, database=None):
        self.gate.wait()
        if b'"poison"' in data:
            raise EngineQueryError("Code: 27. DB::Exception: Cannot parse input (poison)")
        self.inserts.append(data)


def payload(i: int, poison: bool = False) -> bytes:
    return b'[{"i":%d%s}]' % (i, b',"x":"poison"' if poison else b"")


def test_concurrent_submissions_are_grouped_into_one_insert():
    engine = RecordingEngine()
    engine.gate.clear()  # hold the first insert so the rest queue up behind it
    writer = BatchWriter(engine, "INSERT INTO t")
    futures = [writer.submit(payload(0), 1)]
    futures += [writer.submit(payload(i), 1) for i in range(1, 50)]
    engine.gate.set()
    assert [f.result(timeout=10) for f in futures] == [1] * 50
    writer.close()
    assert len(engine.inserts) <= 3  # the first alone, then the 49 queued ones together
    rows = b"".join(engine.inserts)
    assert all(b'{"i":%d}' % i in rows for i in range(50))


def test_a_bad_request_fails_alone():
    engine = RecordingEngine()
    engine.gate.clear()
    writer = BatchWriter(engine, "INSERT INTO t")
    first = writer.submit(payload(0), 1)
    good = [writer.submit(payload(i), 1) for i in range(1, 5)]
    bad = writer.submit(payload(99, poison=True), 1)
    engine.gate.set()
    assert first.result(10) == 1 and [f.result(10) for f in good] == [1] * 4
    with pytest.raises(StoreUnavailable, match="poison"):
        bad.result(10)
    writer.close()
    assert writer.stats.rows == 5 and writer.stats.failed_batches == 1


def test_close_writes_what_is_queued_and_refuses_more():
    engine = RecordingEngine()
    writer = BatchWriter(engine, "INSERT INTO t")
    futures = [writer.submit(payload(i), 1) for i in range(10)]
    writer.close(timeout=10)
    assert all(f.done() and f.result() == 1 for f in futures)
    with pytest.raises(StoreUnavailable, match="shutting down"):
        writer.submit(payload(11), 1).result(1)


def test_requests_that_fail_before_export_stop_counting_as_arriving():
    """A body that never decodes must not leave the writer lingering for it forever."""
    from tracerl.collector.ingest import Ingest

    writer = BatchWriter(RecordingEngine(), "INSERT INTO t")
    ingest = Ingest(writer, max_inflight=4)
    ingest.admit()
    assert ingest.decoding == 1
    ingest.release()  # e.g. the body was too large: no export() call
    assert ingest.decoding == 0
    ingest.admit()
    with pytest.raises(ValueError):
        ingest.export(lambda: (_ for _ in ()).throw(ValueError("bad body")))
    ingest.release()
    assert ingest.decoding == 0
    writer.close()
