"""Reading a stored trace back as a tree, the way the transition builder will: which agent each
LLM call belongs to is the ``gen_ai.agent.name`` of its nearest ``invoke_agent`` ancestor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tracerl import semconv

REPO = Path(__file__).resolve().parents[2]
AGENTS = Path(__file__).with_name("agents")
BIN = Path(sys.executable).parent

SQL = ("SELECT TraceId, SpanName, SpanKind, SpanId, ParentSpanId, StatusCode, SpanAttributes, ScopeName,"
       " `Events.Name` AS event_names, `Events.Attributes` AS event_attributes"
       " FROM otel_traces WHERE TraceId = {tid:String} ORDER BY Timestamp")


class Tree:
    def __init__(self, rows: list[dict]):
        self.rows = rows
        self.by_id = {r["SpanId"]: r for r in rows}

    def op(self, row) -> str | None:
        return row["SpanAttributes"].get(semconv.GEN_AI_OPERATION_NAME)

    def with_op(self, op: str) -> list[dict]:
        return [r for r in self.rows if self.op(r) == op]

    def client_calls(self) -> list[dict]:
        """The OpenAI-client instrumentation's LLM spans (the ones with the token ids)."""
        return [r for r in self.rows if r["ScopeName"] == semconv.SCOPE_OPENAI]

    def ancestors(self, row):
        while row["ParentSpanId"] in self.by_id:
            row = self.by_id[row["ParentSpanId"]]
            yield row

    def agent_of(self, row) -> str | None:
        for up in self.ancestors(row):
            if self.op(up) == semconv.OP_INVOKE_AGENT:
                return up["SpanAttributes"][semconv.GEN_AI_AGENT_NAME]
        return None

    def agents(self) -> list[str]:
        return [r["SpanAttributes"][semconv.GEN_AI_AGENT_NAME] for r in self.with_op(semconv.OP_INVOKE_AGENT)]

    def roots(self) -> list[dict]:
        return [r for r in self.rows if r["ParentSpanId"] not in self.by_id]

    def variables(self, row) -> dict:
        return {a[semconv.VARIABLE_NAME]: json.loads(a[semconv.VARIABLE_VALUE])
                for n, a in zip(row["event_names"], row["event_attributes"]) if n == semconv.EVENT_VARIABLE}


def stored_tree(collector, trace_id: str) -> Tree:
    return Tree(collector.rows(SQL, tid=trace_id))


def run_script(script: str, *, base_url: str, endpoint: str, env: dict, timeout: float = 120.0):
    """Run ``agents/<script>`` under ``opentelemetry-instrument`` as its own process, exporting
    to the collector at ``endpoint`` (host:port, gRPC), the way a user would launch an agent.
    Returns (the JSON lines it printed, the completed process)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACERL_", "TRACEPARENT"))}
    full_env.update({"OPENAI_BASE_URL": base_url, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{endpoint}",
                     "OTEL_BSP_SCHEDULE_DELAY": "200", "PYTHONUNBUFFERED": "1"})
    full_env.update(env)
    cmd = [str(BIN / "opentelemetry-instrument"), sys.executable, str(AGENTS / script)]
    proc = subprocess.run(cmd, env=full_env, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return lines, proc
