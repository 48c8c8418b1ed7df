"""What every runner shares: the rollout it is asked for, what came of it, and the agent's
environment.

A rollout is one OpenTelemetry trace whose root span, ``tracerl.rollout``, the trainer opens
itself (`tracing.py`) with the rollout's identity and ``tracerl.policy.version``, and ends when
the agent is done, with the exit status. The agent is told the rest through its environment:
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (the policy being trained), ``OTEL_EXPORTER_OTLP_ENDPOINT``
(the collector), ``TRACERL_TASK`` (the task as JSON), ``TRACEPARENT`` (its spans join the rollout's
trace under the root span) and ``OTEL_RESOURCE_ATTRIBUTES`` with the ``tracerl.rollout.*`` keys and
the policy version (for agents that are one process per rollout).
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Callable
from urllib.parse import quote

from tracerl import semconv

OK, FAILED, TIMEOUT = "ok", "failed", "timeout"


@dataclass
class RolloutSpec:
    task: dict
    group_id: str
    attempt: int = 0
    mode: str = "train"
    policy_version: int = 0
    index: int = 0  # position in the step's list of rollouts

    @property
    def task_id(self) -> str:
        return str(self.task.get("id"))


@dataclass
class Attempt:
    trace_id: str
    attempt: int
    status: str  # ok | failed | timeout
    exit_code: int | None = None
    error: str = ""
    seconds: float = 0.0


@dataclass
class RolloutResult:
    spec: RolloutSpec
    attempts: list = field(default_factory=list)  # Attempt, in order

    @property
    def final(self) -> Attempt:
        return self.attempts[-1]

    @property
    def ok(self) -> bool:
        return bool(self.attempts) and self.final.status == OK

    @property
    def trace_id(self) -> str:
        return self.final.trace_id


@dataclass
class AgentEndpoints:
    base_url: str  # the policy: an OpenAI-compatible /v1 URL
    otlp_endpoint: str  # the collector's OTLP gRPC endpoint, host:port
    api_key: str = "tracerl"
    model_name: str = "policy"


def resource_attributes(spec: RolloutSpec) -> str:
    """``OTEL_RESOURCE_ATTRIBUTES`` value (W3C baggage-style: key=value pairs, values percent-encoded)."""
    pairs = {semconv.ROLLOUT_TASK_ID: spec.task_id, semconv.ROLLOUT_GROUP_ID: spec.group_id,
             semconv.ROLLOUT_ATTEMPT: str(spec.attempt), semconv.ROLLOUT_MODE: spec.mode,
             semconv.POLICY_VERSION: str(spec.policy_version)}
    return ",".join(f"{k}={quote(v, safe='')}" for k, v in pairs.items())


def agent_environment(spec: RolloutSpec, endpoints: AgentEndpoints, traceparent: str, extra: dict | None = None) -> dict:
    """The variables that tell an agent process which rollout it is and where everything is."""
    env = {
        # A gateway URL may carry the rollout in its path (`.../rollout/{traceparent}/v1`), so an
        # agent that only reads OPENAI_BASE_URL still lands in the rollout's trace.
        "OPENAI_BASE_URL": endpoints.base_url.replace("{traceparent}", traceparent),
        "OPENAI_API_KEY": endpoints.api_key,
        "TRACERL_MODEL": endpoints.model_name,
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + endpoints.otlp_endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        "OTEL_RESOURCE_ATTRIBUTES": resource_attributes(spec),
        "TRACEPARENT": traceparent,
        "TRACERL_TASK": json.dumps(spec.task),
        semconv.ENV_CAPTURE_TOKENS: "1",
    }
    env.update(extra or {})
    return env


_PLACEHOLDER = re.compile(r"\{(task_id|group_id|attempt|mode|policy_version|task\[([^\]]+)\])\}")


def fill_template(template: str, spec: RolloutSpec) -> str:
    """``{task_id}``, ``{group_id}``, ``{attempt}``, ``{mode}``, ``{policy_version}`` and
    ``{task[key]}`` in a command template; any other brace is left as it is."""
    values = {"task_id": spec.task_id, "group_id": spec.group_id, "attempt": spec.attempt, "mode": spec.mode,
              "policy_version": spec.policy_version}

    def replace(m: re.Match) -> str:
        return str(spec.task.get(m.group(2), "")) if m.group(2) else str(values[m.group(1)])

    return _PLACEHOLDER.sub(replace, template)


def run_all(specs: list[RolloutSpec], concurrency: int, retries: int,
            attempt: Callable[[RolloutSpec], Attempt]) -> list[RolloutResult]:
    """Run every rollout, ``concurrency`` at a time; a failed attempt is retried as a new attempt
    (``attempt + 1``, a new trace), at most ``retries`` times. Shared by the runners."""

    def one(spec: RolloutSpec) -> RolloutResult:
        result = RolloutResult(spec)
        for retry in range(retries + 1):
            result.attempts.append(attempt(replace(spec, attempt=spec.attempt + retry)))
            if result.final.status == OK:
                break
        return result

    with ThreadPoolExecutor(concurrency, thread_name_prefix="tracerl-rollout") as pool:
        return list(pool.map(one, specs))
