"""Run `plain_agent.py` as a subprocess, the way a user or the trainer would launch an agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

AGENT = Path(__file__).with_name("plain_agent.py")
REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run_agent(*, base_url: str, endpoint: str | None, instrument: bool, env: dict | None = None,
              timeout: float = 60.0) -> tuple[list[dict], subprocess.CompletedProcess]:
    """Returns (the JSON lines it printed, the completed process). ``endpoint`` is the collector's
    gRPC address (host:port)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACERL_", "TRACEPARENT"))}
    full_env.update({
        "OPENAI_BASE_URL": base_url,
        "OTEL_BSP_SCHEDULE_DELAY": "200",
        "PYTHONUNBUFFERED": "1",
    })
    if endpoint:
        full_env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://{endpoint}"
    full_env.update(env or {})
    cmd = [sys.executable, str(AGENT)]
    if instrument:
        cmd = [str(BIN / "opentelemetry-instrument"), *cmd]
    else:
        full_env["AGENT_INIT"] = "1"
    proc = subprocess.run(cmd, env=full_env, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return lines, proc
