"""The `python` runner: the agent is a function ``agent(task) -> None``, run in a thread pool in
the trainer's process.

Each call runs inside the rollout's root span (the current span of its thread), so the
OpenAI-client spans it makes, instrumented in this process, land in the rollout's trace. The
policy endpoint is in ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` of this process (one policy for
all rollouts). The function must not open a ``tracerl.rollout`` of its own: the runner already did.
A call that raises fails the attempt (retried as a new attempt); a call still running after
``timeout_s`` marks the attempt timed out (Python cannot stop a thread: it finishes in the
background, in a trace nobody trains on).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from opentelemetry import context as otel_context
from opentelemetry import trace

from .. import tracing
from .base import FAILED, OK, TIMEOUT, AgentEndpoints, Attempt, RolloutResult, RolloutSpec, run_all


def load_function(reference: str, base_dir: str | None = None):
    """``package.module:function`` or ``path/to/file.py:function``."""
    target, _, name = reference.rpartition(":")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_absolute() and base_dir:
            path = Path(base_dir) / path
        spec = importlib.util.spec_from_file_location(f"tracerl_agent_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ValueError(f"runner.function: cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    try:
        return getattr(module, name)
    except AttributeError:
        raise ValueError(f"runner.function: {target} has no {name!r}") from None


class PythonRunner:
    kind = "python"

    def __init__(self, function, *, concurrency: int = 4, timeout_s: float = 120.0, retries: int = 0,
                 env: dict | None = None):
        self.function, self.concurrency, self.timeout_s, self.retries = function, concurrency, timeout_s, retries
        self.env = dict(env or {})
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="tracerl-agent")

    def run(self, specs: list[RolloutSpec], endpoints: AgentEndpoints) -> list[RolloutResult]:
        os.environ.update({"OPENAI_BASE_URL": endpoints.base_url, "OPENAI_API_KEY": endpoints.api_key,
                           "TRACERL_MODEL": endpoints.model_name, **self.env})
        return run_all(specs, self.concurrency, self.retries, self._attempt)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _attempt(self, spec: RolloutSpec) -> Attempt:
        span = tracing.start_rollout(spec, self.kind)
        started = time.monotonic()
        future = self._pool.submit(self._call, span, dict(spec.task))
        status, error = OK, ""
        try:
            future.result(timeout=self.timeout_s)
        except FutureTimeout:
            status, error = TIMEOUT, f"timed out after {self.timeout_s:g}s"
        except Exception as exc:  # noqa: BLE001 - the agent's error fails the attempt, not the trainer
            status, error = FAILED, f"{type(exc).__name__}: {exc}"
            span.record_exception(exc)
        tracing.end_rollout(span, status, None, error)
        return Attempt(tracing.trace_id_of(span), spec.attempt, status, None, error, time.monotonic() - started)

    def _call(self, span, task: dict) -> None:
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            self.function(task)
        finally:
            otel_context.detach(token)
