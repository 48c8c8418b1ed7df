"""Runners launch the agent once per rollout: `command` (local subprocesses), `python` (a
function in a thread pool) and `kubernetes` (one Job per rollout). Each has
``run(specs, endpoints) -> list[RolloutResult]``."""

from __future__ import annotations

from .base import AgentEndpoints, Attempt, RolloutResult, RolloutSpec


def make_runner(config, log_dir: str | None = None):
    """The runner a `TrainConfig` asks for."""
    r = config.runner
    if r.kind == "command":
        from .command import CommandRunner

        return CommandRunner(r.command, concurrency=r.concurrency, timeout_s=r.timeout_s, retries=r.retries,
                             env=r.env, workdir=r.workdir or config.base_dir, log_dir=log_dir)
    if r.kind == "python":
        from .python import PythonRunner, load_function

        return PythonRunner(load_function(r.function, config.base_dir), concurrency=r.concurrency,
                            timeout_s=r.timeout_s, retries=r.retries, env=r.env)
    if r.kind == "kubernetes":
        from .kubernetes import KubernetesRunner

        k = r.kubernetes
        template = open(k.template).read() if k.template else None
        return KubernetesRunner(r.command or "python agent.py", image=k.image, namespace=k.namespace,
                                template=template, concurrency=r.concurrency, timeout_s=r.timeout_s,
                                retries=r.retries, env=r.env, service_account=k.service_account, poll_s=k.poll_s,
                                delete_finished=k.delete_finished)
    raise ValueError(f"runner.kind: unknown runner {r.kind!r}")


__all__ = ["AgentEndpoints", "Attempt", "RolloutResult", "RolloutSpec", "make_runner"]
