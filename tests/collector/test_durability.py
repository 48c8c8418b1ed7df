"""An export answered with success is in the store, even if the collector dies right after."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.collector_proc import CollectorProcess

WORKER = Path(__file__).with_name("exporter_worker.py")


def start_workers(collector, tmp_path, n_per_kind=2):
    stop = tmp_path / "stop"
    workers = []
    for kind in ("grpc", "http"):
        endpoint = collector.grpc_endpoint if kind == "grpc" else collector.http_endpoint
        for i in range(n_per_kind):
            acked = tmp_path / f"acked-{kind}-{i}.txt"
            proc = subprocess.Popen([sys.executable, str(WORKER), kind, endpoint, str(acked), str(stop), f"dur-{kind}-{i}"])
            workers.append((proc, acked))
    return stop, workers


def acked_ids(workers) -> set[str]:
    ids = set()
    for _, path in workers:
        if path.exists():
            ids.update(line for line in path.read_text().splitlines() if len(line) == 16)
    return ids


def wait_for_acks(workers, at_least: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(acked_ids(workers)) < at_least:
        assert time.monotonic() < deadline, "exporters got no acknowledgements"
        time.sleep(0.1)


def stop_workers(stop: Path, workers) -> None:
    stop.touch()
    for proc, _ in workers:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def stored_ids(collector) -> set[str]:
    return {r["SpanId"] for r in collector.rows("SELECT SpanId FROM otel_traces WHERE ServiceName LIKE 'dur-%'")}


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
def test_acknowledged_spans_survive_the_collector_stopping(tmp_path, sig):
    store = tmp_path / "store"
    collector = CollectorProcess(store).start()
    stop, workers = start_workers(collector, tmp_path)
    try:
        wait_for_acks(workers, at_least=2000)
        collector.proc.send_signal(sig)  # while the exporters are still sending
        code = collector.proc.wait(30)
        if sig == signal.SIGTERM:
            assert code == 0, collector.log()
            assert "stopped (" in collector.log()
    finally:
        stop_workers(stop, workers)
    acked = acked_ids(workers)
    assert len(acked) >= 2000
    # A new collector on the same store (the old owner file is stale and ignored) sees every one.
    again = CollectorProcess(store).start()
    try:
        missing = acked - stored_ids(again)
        assert not missing, f"{len(missing)} acknowledged spans lost, e.g. {sorted(missing)[:3]}"
    finally:
        again.stop()
