"""The `command` runner: the agent is a shell command, run as a local subprocess per rollout.

N run at a time (``concurrency``); each gets its own environment (`base.agent_environment`), a
timeout after which its process group is killed, and its exit status recorded on the rollout's
root span. A failed attempt (non-zero exit, timeout) is retried ``retries`` times, each time as a
new attempt: a new rollout with its own trace and ``attempt`` + 1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from .. import tracing
from .base import FAILED, OK, TIMEOUT, AgentEndpoints, Attempt, RolloutResult, RolloutSpec, agent_environment, fill_template, run_all


class CommandRunner:
    kind = "command"

    def __init__(self, command: str, *, concurrency: int = 4, timeout_s: float = 120.0, retries: int = 0,
                 env: dict | None = None, workdir: str | None = None, log_dir: str | None = None):
        self.command, self.concurrency, self.timeout_s, self.retries = command, concurrency, timeout_s, retries
        self.env, self.workdir, self.log_dir = dict(env or {}), workdir, log_dir

    def run(self, specs: list[RolloutSpec], endpoints: AgentEndpoints) -> list[RolloutResult]:
        return run_all(specs, self.concurrency, self.retries, lambda spec: self._attempt(spec, endpoints))

    def _attempt(self, spec: RolloutSpec, endpoints: AgentEndpoints) -> Attempt:
        span = tracing.start_rollout(spec, self.kind)
        trace_id = tracing.trace_id_of(span)
        env = dict(os.environ)
        env.pop("TRACEPARENT", None)
        env.update(agent_environment(spec, endpoints, tracing.traceparent_of(span), self.env))
        log = self._log_file(trace_id)
        started = time.monotonic()
        status, code, error = OK, None, ""
        try:
            proc = subprocess.Popen(fill_template(self.command, spec), shell=True, env=env, cwd=self.workdir,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                code = proc.wait(timeout=self.timeout_s)
                if code != 0:
                    status, error = FAILED, f"exit status {code}"
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                code = proc.wait()
                status, error = TIMEOUT, f"timed out after {self.timeout_s:g}s"
        except OSError as exc:
            status, error = FAILED, f"could not start: {exc}"
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
            tracing.end_rollout(span, status, code, error)
        return Attempt(trace_id, spec.attempt, status, code, error, time.monotonic() - started)

    def _log_file(self, trace_id: str):
        if not self.log_dir:
            return subprocess.DEVNULL
        os.makedirs(self.log_dir, exist_ok=True)
        return open(os.path.join(self.log_dir, f"{trace_id}.log"), "wb")


def _kill_group(proc: subprocess.Popen) -> None:
    """The shell and whatever it started: the whole process group of the rollout."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
