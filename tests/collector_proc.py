"""Run a real `tracerl collector` as a subprocess for tests, on free loopback ports."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import clickhouse_connect


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
    """Signal ``proc`` (if still running) and wait for it; kill it after ``timeout``. Its exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


class CollectorProcess:
    """A `tracerl collector` subprocess owning the embedded store at ``store_dir``.

    ``grpc_endpoint`` is ``127.0.0.1:PORT`` (for the OTLP gRPC exporter), ``http_endpoint`` is
    ``http://127.0.0.1:PORT/v1/traces``, ``query_url`` is the ClickHouse-compatible endpoint.
    """

    def __init__(self, store_dir: Path, *extra_args: str, env: dict | None = None):
        self.store_dir = Path(store_dir)
        self.grpc_port, self.http_port, self.query_port = free_port(), free_port(), free_port()
        self.extra_args = list(extra_args)
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.log_path = self.store_dir.parent / f"collector-{self.grpc_port}.log"

    @property
    def store_dsn(self) -> str:
        return f"chdb://{self.store_dir}"

    @property
    def grpc_endpoint(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def http_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/v1/traces"

    @property
    def query_url(self) -> str:
        return f"http://127.0.0.1:{self.query_port}"

    def start(self, timeout: float = 60.0) -> "CollectorProcess":
        cmd = [sys.executable, "-m", "tracerl.cli", "collector", "--store", self.store_dsn,
               "--grpc", self.grpc_endpoint, "--http", f"127.0.0.1:{self.http_port}",
               "--query", f"127.0.0.1:{self.query_port}", *self.extra_args]
        env = dict(os.environ, **(self.env or {}))
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"collector exited with {self.proc.returncode}:\n{self.log()}")
            if self._ready():
                return self
            time.sleep(0.1)
        raise TimeoutError(f"collector did not start in {timeout}s:\n{self.log()}")

    def _ready(self) -> bool:
        if "--store" in self.extra_args:  # a server DSN: no owner file, no query endpoint
            return self._get(f"http://127.0.0.1:{self.http_port}/")
        return self._owner_written() and self._get(self.query_url + "/ping")

    def _owner_written(self) -> bool:
        try:
            info = json.loads(Path(str(self.store_dir) + ".owner.json").read_text())
        except (OSError, ValueError):
            return False
        return info.get("pid") == self.proc.pid

    @staticmethod
    def _get(url: str) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                return r.status == 200
        except OSError:
            return False

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def client(self, **kwargs):
        """clickhouse-connect HTTP client for the query endpoint."""
        return clickhouse_connect.get_client(host="127.0.0.1", port=self.query_port, **kwargs)

    def rows(self, sql: str, **params) -> list[dict]:
        """Run ``sql`` through the query endpoint; rows as dicts."""
        result = self.client().query(sql, parameters=params or None)
        return [dict(zip(result.column_names, row)) for row in result.result_rows]

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.proc is None:
            return 0
        code = stop_process(self.proc, sig, timeout)
        self._log.close()
        return code
