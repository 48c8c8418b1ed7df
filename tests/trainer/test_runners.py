"""The runners without a store: what the agent is told, exit status, timeouts, retries as new
attempts; the Kubernetes Job manifests and a fake batch API. (The test process sets up no
tracer provider, so root spans are non-recording here; the integration test checks them.)"""

import json
import sys
from types import SimpleNamespace
from urllib.parse import unquote

import pytest

from tracerl.trainer.runner.base import AgentEndpoints, RolloutSpec, agent_environment, resource_attributes
from tracerl.trainer.runner.command import CommandRunner
from tracerl.trainer.runner.kubernetes import KubernetesRunner, render_job
from tracerl.trainer.runner.python import PythonRunner, load_function

ENDPOINTS = AgentEndpoints("http://127.0.0.1:9/v1", "127.0.0.1:4317")


def spec(task_id="t1", **kw):
    return RolloutSpec({"id": task_id, "q": "a, b=c"}, group_id=f"{task_id}/step1/0", policy_version=3, **kw)


def test_agent_environment_names_the_rollout_and_the_endpoints():
    env = agent_environment(spec(), ENDPOINTS, "00-" + "a" * 32 + "-" + "b" * 16 + "-01")
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1" and env["OPENAI_API_KEY"]
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:4317"
    assert json.loads(env["TRACERL_TASK"]) == {"id": "t1", "q": "a, b=c"}
    assert env["TRACEPARENT"].startswith("00-aaaa")
    assert env["TRACERL_CAPTURE_TOKENS"] == "1"
    attrs = dict(pair.split("=", 1) for pair in env["OTEL_RESOURCE_ATTRIBUTES"].split(","))
    assert {k: unquote(v) for k, v in attrs.items()} == {
        "tracerl.rollout.task_id": "t1", "tracerl.rollout.group_id": "t1/step1/0", "tracerl.rollout.attempt": "0",
        "tracerl.rollout.mode": "train", "tracerl.policy.version": "3"}
    assert "," not in resource_attributes(RolloutSpec({"id": "a,b"}, "g")).split(",")[0].split("=")[1]


def test_a_gateway_agent_url_carries_the_rollout_in_its_path():
    traceparent = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
    gateway = AgentEndpoints("http://127.0.0.1:8090/rollout/{traceparent}/v1", ENDPOINTS.otlp_endpoint)
    env = agent_environment(spec(), gateway, traceparent)
    assert env["OPENAI_BASE_URL"] == f"http://127.0.0.1:8090/rollout/{traceparent}/v1"
    assert agent_environment(spec(), ENDPOINTS, traceparent)["OPENAI_BASE_URL"] == ENDPOINTS.base_url


def test_command_runner_passes_the_environment_and_records_exit_status(tmp_path):
    out = tmp_path / "seen.json"
    script = ("import json, os, sys; json.dump({k: os.environ[k] for k in ('TRACERL_TASK', 'OPENAI_BASE_URL', "
              f"'TRACEPARENT')}}, open({str(out)!r}, 'w'))")
    runner = CommandRunner(f"{sys.executable} -c \"{script}\"", concurrency=2, timeout_s=30)
    [result] = runner.run([spec()], ENDPOINTS)
    assert result.ok and result.final.exit_code == 0
    seen = json.loads(out.read_text())
    assert json.loads(seen["TRACERL_TASK"])["id"] == "t1" and seen["OPENAI_BASE_URL"] == ENDPOINTS.base_url


def test_command_runner_retries_failures_as_new_attempts(tmp_path):
    runner = CommandRunner(f"{sys.executable} -c 'import sys; sys.exit(3)'", retries=2, timeout_s=30)
    [result] = runner.run([spec(attempt=0)], ENDPOINTS)
    assert [(a.attempt, a.status, a.exit_code) for a in result.attempts] == [
        (0, "failed", 3), (1, "failed", 3), (2, "failed", 3)]
    assert not result.ok
    # A template sees the attempt: succeed on the second one.
    runner = CommandRunner(f"{sys.executable} -c 'import sys; sys.exit(0 if {{attempt}} == 1 else 1)'", retries=3)
    [result] = runner.run([spec()], ENDPOINTS)
    assert [a.status for a in result.attempts] == ["failed", "ok"] and result.ok


def test_command_runner_kills_a_rollout_past_its_timeout():
    runner = CommandRunner(f"{sys.executable} -c 'import time; time.sleep(60)'", timeout_s=0.5)
    [result] = runner.run([spec()], ENDPOINTS)
    assert result.final.status == "timeout" and result.final.seconds < 30


def test_python_runner_calls_the_function_and_fails_attempts_that_raise(tmp_path):
    seen = []

    def agent(task):
        seen.append(task["id"])
        if task["id"] == "bad":
            raise RuntimeError("boom")

    runner = PythonRunner(agent, concurrency=2, retries=1, timeout_s=30)
    good, bad = runner.run([spec("good"), spec("bad")], ENDPOINTS)
    runner.close()
    assert good.ok and [a.status for a in bad.attempts] == ["failed", "failed"]
    assert "RuntimeError: boom" in bad.final.error
    assert sorted(seen) == ["bad", "bad", "good"]


def test_load_function_from_a_file_and_a_module(tmp_path):
    (tmp_path / "my_agent.py").write_text("def run(task):\n    return task['id']\n")
    assert load_function("my_agent.py:run", str(tmp_path))({"id": 7}) == 7
    assert load_function("json:dumps")({"a": 1}) == '{"a": 1}'
    with pytest.raises(ValueError, match="has no 'nope'"):
        load_function("json:nope")


def test_command_template_fills_known_placeholders_only():
    from tracerl.trainer.runner.base import fill_template

    got = fill_template("run {task_id} {attempt} {task[q]} {policy_version} {not_a_field} {{x}}", spec(attempt=2))
    assert got == "run t1 2 a, b=c 3 {not_a_field} {{x}}"


def test_kubernetes_job_manifest():
    from tracerl.trainer.runner.kubernetes import DEFAULT_TEMPLATE

    env = agent_environment(spec(), ENDPOINTS, "00-" + "c" * 32 + "-" + "d" * 16 + "-01")
    job = render_job(DEFAULT_TEMPLATE, spec(), "c" * 32, namespace="agents", image="me/agent:1",
                     command="python agent.py", env=env, timeout_s=120, service_account="runner")
    assert job["kind"] == "Job" and job["apiVersion"] == "batch/v1"
    assert job["metadata"]["name"] == "tracerl-rollout-" + "c" * 20 and job["metadata"]["namespace"] == "agents"
    assert job["metadata"]["labels"]["tracerl.rollout/group"] == "t1-step1-0"
    assert job["spec"]["backoffLimit"] == 0 and job["spec"]["activeDeadlineSeconds"] == 150
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never" and pod["serviceAccountName"] == "runner"
    container = pod["containers"][0]
    assert container["image"] == "me/agent:1" and container["command"] == ["/bin/sh", "-c", "python agent.py"]
    names = {e["name"]: e["value"] for e in container["env"]}
    assert names["TRACEPARENT"] == env["TRACEPARENT"] and names["OTEL_RESOURCE_ATTRIBUTES"]
    assert json.loads(names["TRACERL_TASK"])["id"] == "t1"


class FakeBatchApi:
    """kubernetes.client.BatchV1Api's three calls the runner makes; Jobs finish as told."""

    def __init__(self, outcomes):
        self.outcomes = list(outcomes)  # per created job: "succeeded" | "failed" | "running"
        self.created, self.deleted, self.state = [], [], {}

    def create_namespaced_job(self, namespace, body):
        self.created.append((namespace, body))
        self.state[body["metadata"]["name"]] = self.outcomes.pop(0)

    def read_namespaced_job_status(self, name, namespace):
        outcome = self.state[name]
        return SimpleNamespace(status=SimpleNamespace(succeeded=1 if outcome == "succeeded" else None,
                                                      failed=1 if outcome == "failed" else None))

    def delete_namespaced_job(self, name, namespace, propagation_policy):
        self.deleted.append(name)


def test_kubernetes_runner_against_a_fake_api():
    api = FakeBatchApi(["failed", "succeeded", "running"])
    runner = KubernetesRunner("python agent.py", image="me/agent:1", namespace="ns", retries=1, timeout_s=0.3,
                              poll_s=0.05, api=api)
    [result] = runner.run([spec("a")], ENDPOINTS)
    assert [(a.attempt, a.status) for a in result.attempts] == [(0, "failed"), (1, "ok")]
    assert [ns for ns, _ in api.created] == ["ns", "ns"]
    assert api.created[1][1]["metadata"]["labels"]["tracerl.rollout/attempt"] == "1"
    assert len(api.deleted) == 2  # failed jobs and (delete_finished) finished ones
    [timed_out] = KubernetesRunner("x", image="i", timeout_s=0.2, poll_s=0.05, api=api).run([spec("c")], ENDPOINTS)
    assert timed_out.final.status == "timeout" and len(api.deleted) == 3
