"""Run a real `tracerl gateway` as a subprocess for tests, on a free loopback port, exporting to a
test collector; plus the small HTTP helpers the gateway tests share."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.collector_proc import free_port, stop_process

REPO = Path(__file__).resolve().parents[2]


class GatewayProcess:
    def __init__(self, upstreams: list[str], *extra_args: str, collector=None, token: str = "",
                 log_dir: Path | None = None, env: dict | None = None):
        self.upstreams = list(upstreams)
        self.port = free_port()
        self.extra_args = list(extra_args)
        self.collector = collector
        self.token = token
        self.env = env
        self.log_path = Path(log_dir or "/tmp") / f"gateway-{self.port}.log"
        self.proc: subprocess.Popen | None = None
        self.http = httpx.Client(base_url=self.url, timeout=30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def start(self, timeout: float = 30.0) -> "GatewayProcess":
        cmd = [sys.executable, "-m", "tracerl.cli", "gateway", "--listen", f"127.0.0.1:{self.port}"]
        for upstream in self.upstreams:
            cmd += ["--upstream", upstream]
        if self.collector is not None:
            cmd += ["--otlp-endpoint", self.collector.grpc_endpoint]
        cmd += self.extra_args
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACERL_", "TRACEPARENT"))}
        env.update({"OTEL_BSP_SCHEDULE_DELAY": "100", "PYTHONUNBUFFERED": "1"})
        if self.token:
            env["TRACERL_TOKEN"] = self.token
        env.update(self.env or {})
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gateway exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if self.http.get("/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"gateway did not start in {timeout}s:\n{self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # --- admin ---
    def admin(self, method: str, path: str, json=None, token: str | None = None, **kwargs) -> httpx.Response:
        token = self.token if token is None else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.http.request(method, path, json=json, headers=headers, **kwargs)

    def open_rollout(self, **attrs) -> dict:
        r = self.admin("POST", "/admin/rollouts", json=attrs)
        assert r.status_code == 201, r.text
        return r.json()

    def end_rollout(self, key: str, **args) -> dict:
        r = self.admin("POST", f"/admin/rollouts/{key}/end", json=args)
        assert r.status_code == 200, r.text
        assert r.json()["flushed"] or args.get("flush") is False, r.text
        return r.json()

    def flush(self) -> None:
        r = self.admin("POST", "/admin/flush")
        assert r.status_code == 200 and r.json()["flushed"], r.text

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        self.http.close()
        if self.proc is None:
            return 0
        code = stop_process(self.proc, sig, timeout)
        self._log.close()
        return code


SPAN_COLUMNS = ("SpanName, SpanKind, SpanId, ParentSpanId, TraceId, StatusCode, StatusMessage, ScopeName, ServiceName,"
                " SpanAttributes")


def trace_spans(collector, trace_id: str) -> list[dict]:
    return collector.rows(f"SELECT {SPAN_COLUMNS} FROM otel_traces WHERE TraceId = {{tid:String}} ORDER BY Timestamp",
                          tid=trace_id)


def llm_spans(collector, trace_id: str) -> list[dict]:
    return [s for s in trace_spans(collector, trace_id) if s["SpanKind"] == "Client"]
