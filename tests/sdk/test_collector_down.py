"""Tracing never holds the agent back: a dead or silent collector costs spans, not the run.

Bounds here are the subprocess time-outs (the process must finish at all, with the default SDK
settings it would wait out the exporter's retries); no test asserts a speed.
"""

from __future__ import annotations

import json
import socket

import pytest

from tests.collector_proc import free_port
from tests.sdk.agent_runner import run_agent

TASKS = json.dumps([{"id": f"t{i}", "question": f"{i}+{i}?", "expected": "ok"} for i in range(10)])


@pytest.fixture
def silent_endpoint():
    """A port that accepts TCP connections and never answers (a hung collector)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield f"127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


@pytest.mark.parametrize("launch", ["tracerl.init", "opentelemetry-instrument"])
def test_agent_completes_when_collector_is_down(llm, launch):
    dead = f"127.0.0.1:{free_port()}"
    printed, proc = run_agent(base_url=llm.base_url, endpoint=dead, instrument=launch != "tracerl.init",
                              env={"AGENT_TASKS": TASKS, "AGENT_PRINT_STATS": "1"}, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert len([p for p in printed if "task" in p]) == 10
    stats = printed[-1]["stats"]
    assert stats["dropped"] > 0 and stats["exported"] == 0
    assert "tracerl dropped" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_agent_completes_when_collector_hangs(llm, silent_endpoint):
    printed, proc = run_agent(base_url=llm.base_url, endpoint=silent_endpoint, instrument=False,
                              env={"AGENT_TASKS": TASKS, "AGENT_PRINT_STATS": "1"}, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert len([p for p in printed if "task" in p]) == 10
    assert printed[-1]["stats"]["dropped"] > 0
    assert "tracerl dropped" in proc.stderr
