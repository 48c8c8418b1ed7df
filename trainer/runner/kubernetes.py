"""The `kubernetes` runner: one Job per rollout, created with the official `kubernetes` client.

The Job is rendered from a template (``runner.kubernetes.template``, a YAML manifest with
``${job_name}``, ``${namespace}``, ``${image}``, ``${command}``, ``${task_id}``, ``${group_id}``,
``${attempt}``, ``${mode}``, ``${policy_version}`` placeholders; default: `DEFAULT_TEMPLATE`),
then the agent environment (`base.agent_environment`) is added to every container. The runner
polls each Job until it succeeds, fails, or passes ``timeout_s`` (then it is deleted and the
attempt marked timed out); failed attempts are retried as new attempts, like the other runners.

The endpoints the agents get must be reachable from the cluster: set ``policy_server.agent_url``
and ``collector`` to addresses the pods can reach. (Tested against the rendered manifests and a
fake API; no cluster was available where this was written.)
"""

from __future__ import annotations

import re
import time
from string import Template

from .. import tracing
from .base import FAILED, OK, TIMEOUT, AgentEndpoints, Attempt, RolloutResult, RolloutSpec, agent_environment, run_all

DEFAULT_TEMPLATE = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: ${job_name}
  namespace: ${namespace}
  labels:
    app.kubernetes.io/managed-by: tracerl
    tracerl.rollout/group: "${group_label}"
    tracerl.rollout/attempt: "${attempt}"
spec:
  backoffLimit: 0
  activeDeadlineSeconds: ${deadline_s}
  ttlSecondsAfterFinished: 600
  template:
    metadata:
      labels:
        app.kubernetes.io/managed-by: tracerl
    spec:
      restartPolicy: Never
      containers:
        - name: agent
          image: ${image}
          command: ["/bin/sh", "-c", ${command_json}]
"""


def job_name(trace_id: str) -> str:
    return f"tracerl-rollout-{trace_id[:20]}"


def _label(value: str) -> str:
    """A valid label value: at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", value)[:63].strip("-_.")
    return cleaned or "none"


def render_job(template: str, spec: RolloutSpec, trace_id: str, *, namespace: str, image: str, command: str,
               env: dict, timeout_s: float, service_account: str | None = None) -> dict:
    """The Job manifest (a dict) for one rollout attempt."""
    import json

    import yaml

    values = {"job_name": job_name(trace_id), "namespace": namespace, "image": image, "command": command,
              "command_json": json.dumps(command), "task_id": spec.task_id, "group_id": spec.group_id,
              "group_label": _label(spec.group_id), "attempt": spec.attempt, "mode": spec.mode,
              "policy_version": spec.policy_version, "deadline_s": int(timeout_s) + 30, "trace_id": trace_id}
    manifest = yaml.safe_load(Template(template).substitute(values))
    pod = manifest["spec"]["template"]["spec"]
    if service_account:
        pod["serviceAccountName"] = service_account
    for container in pod.get("containers", []):
        present = {e["name"] for e in container.get("env", [])}
        container.setdefault("env", []).extend({"name": k, "value": str(v)} for k, v in env.items() if k not in present)
    return manifest


class KubernetesRunner:
    kind = "kubernetes"

    def __init__(self, command: str, *, image: str, namespace: str = "default", template: str | None = None,
                 concurrency: int = 4, timeout_s: float = 120.0, retries: int = 0, env: dict | None = None,
                 service_account: str | None = None, poll_s: float = 2.0, delete_finished: bool = True, api=None):
        self.command, self.image, self.namespace = command, image, namespace
        self.template = template or DEFAULT_TEMPLATE
        self.concurrency, self.timeout_s, self.retries = concurrency, timeout_s, retries
        self.env, self.service_account, self.poll_s = dict(env or {}), service_account, poll_s
        self.delete_finished = delete_finished
        self._api = api  # a kubernetes.client.BatchV1Api (tests pass a fake one)

    @property
    def api(self):
        if self._api is None:
            from kubernetes import client, config

            try:
                config.load_incluster_config()
            except config.ConfigException:
                config.load_kube_config()
            self._api = client.BatchV1Api()
        return self._api

    def run(self, specs: list[RolloutSpec], endpoints: AgentEndpoints) -> list[RolloutResult]:
        return run_all(specs, self.concurrency, self.retries, lambda spec: self._attempt(spec, endpoints))

    def _attempt(self, spec: RolloutSpec, endpoints: AgentEndpoints) -> Attempt:
        span = tracing.start_rollout(spec, self.kind)
        trace_id = tracing.trace_id_of(span)
        env = agent_environment(spec, endpoints, tracing.traceparent_of(span), self.env)
        manifest = render_job(self.template, spec, trace_id, namespace=self.namespace, image=self.image,
                              command=self.command, env=env, timeout_s=self.timeout_s,
                              service_account=self.service_account)
        name = manifest["metadata"]["name"]
        started = time.monotonic()
        status, code, error = FAILED, None, ""
        try:
            self.api.create_namespaced_job(namespace=self.namespace, body=manifest)
            status, code, error = self._wait(name)
        except Exception as exc:  # noqa: BLE001 - an API error fails this attempt only
            error = f"{type(exc).__name__}: {exc}"
        finally:
            if status != OK or self.delete_finished:
                self._delete(name)
            tracing.end_rollout(span, status, code, error)
        return Attempt(trace_id, spec.attempt, status, code, error, time.monotonic() - started)

    def _wait(self, name: str) -> tuple[str, int | None, str]:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            job = self.api.read_namespaced_job_status(name=name, namespace=self.namespace)
            state = job.status
            if getattr(state, "succeeded", None):
                return OK, 0, ""
            if getattr(state, "failed", None):
                return FAILED, 1, f"job {name} failed"
            time.sleep(self.poll_s)
        return TIMEOUT, None, f"timed out after {self.timeout_s:g}s"

    def _delete(self, name: str) -> None:
        try:
            self.api.delete_namespaced_job(name=name, namespace=self.namespace, propagation_policy="Background")
        except Exception:  # noqa: BLE001 - best effort; ttlSecondsAfterFinished cleans up too
            pass
