"""End to end: an agent that knows nothing of tracerl (a subprocess with the plain openai client,
its base URL from the environment) is run on tasks through the gateway, the way the trainer's
rollout runner would: register a rollout, launch the agent with the rollout's base URL, score the
answer, end the rollout with the reward. Its calls become transitions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_openai_server import Reply, logprob, render_chat, token_ids

AGENT = Path(__file__).with_name("agents") / "plain_openai_agent.py"
TASKS = [{"id": "add-2", "question": "2 + 2?", "expected": "4"}, {"id": "add-3", "question": "3 + 3?", "expected": "6"}]


def run_agent(base_url: str, task: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACERL_", "TRACEPARENT", "OPENAI_"))}
    env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-harness-key")
    proc = subprocess.run([sys.executable, str(AGENT), json.dumps(task)], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_an_uninstrumented_agent_is_trained_on_through_the_gateway(gateway, upstream, build):
    # two attempts per task (a GRPO group each); the second attempt at each task gets it wrong
    answers = {("add-2", 0): ("4", "4"), ("add-2", 1): ("4", "5"), ("add-3", 0): ("6", "6"), ("add-3", 1): ("7", "7")}
    rollouts = []
    for attempt in (0, 1):
        for task in TASKS:
            first, final = answers[(task["id"], attempt)]
            upstream.script(Reply(first), Reply(final))
            ro = gateway.open_rollout(task_id=task["id"], group_id=task["id"], attempt=attempt, mode="train",
                                      policy_version="step-0", task={"question": task["question"]})
            out = run_agent(ro["base_url"], task)
            assert out["tracing_modules"] == []
            reward = float(out["answer"].strip() == task["expected"])
            gateway.end_rollout(ro["key"], reward=reward, components={"correct": reward})
            rollouts.append((ro["trace_id"], task, attempt, reward))
    assert [r[3] for r in rollouts] == [1.0, 1.0, 0.0, 0.0]
    assert all(r.headers["Authorization"] == "Bearer sk-harness-key" for r in upstream.requests)

    transitions, report = build(*(r[0] for r in rollouts))
    assert report.built == 4 and not report.skipped, report.summary()
    for trace_id, task, attempt, reward in rollouts:
        mine = sorted((t for t in transitions if t.trace_id == trace_id), key=lambda t: t.step)
        first, final = answers[(task["id"], attempt)]
        asked = [{"role": "user", "content": task["question"]}]
        checked = asked + [{"role": "assistant", "content": first}, {"role": "user", "content": "Sure?"}]
        assert [(t.step, t.task_id, t.group_id, t.attempt, t.mode, t.policy_version) for t in mine] == [
            (0, task["id"], task["id"], attempt, "train", "step-0"), (1, task["id"], task["id"], attempt, "train",
                                                                      "step-0")]
        assert [t.prompt_ids for t in mine] == [token_ids(render_chat(asked)), token_ids(render_chat(checked))]
        assert [t.response_ids for t in mine] == [token_ids(first), token_ids(final)]
        assert [t.logprobs for t in mine] == [[pytest.approx(logprob(0))]] * 2
        assert [t.response_mask for t in mine] == [[1], [1]]
        assert [(t.reward, t.credit, t.flags) for t in mine] == [(reward, reward, [])] * 2
