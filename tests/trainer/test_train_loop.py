"""`tracerl train` end to end on CPU: a tiny random model served by the policy server, the agent
run by the `python` and by the `command` runner, two steps through collector -> store ->
transition builder -> update. The trainer runs as a subprocess against the shared collector's
store (the test process never opens a chdb store)."""

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

AGENT = Path(__file__).parent / "agents" / "hash_agent.py"


def write_config(folder: Path, model_dir: str, store: str, runner: dict, prefix: str) -> Path:
    tasks = folder / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": f"{prefix}-{i}", "prompt": f"say the word {w}"}) + "\n"
                             for i, w in enumerate(["red", "blue"])))
    config = {"model": model_dir, "tasks": str(tasks), "group_size": 4, "tasks_per_step": 2, "steps": 2,
              "optimizer": {"lr": 1.0e-2}, "algorithm": {"advantage": "grpo", "credit": "identical"},
              "runner": runner, "store": store, "output_dir": str(folder / "out"), "checkpoint_every": 1,
              "traces": {"quiet_s": 0.3, "poll_s": 0.1, "timeout_s": 60}, "console": False}
    path = folder / "config.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


@pytest.mark.parametrize("runner", [
    {"kind": "python", "function": f"{AGENT}:agent", "concurrency": 4, "timeout_s": 60},
    {"kind": "command", "command": f"{sys.executable} {AGENT}", "concurrency": 4, "timeout_s": 60},
], ids=["python", "command"])
def test_two_steps_through_the_store(collector, toy_model_dir, tmp_path, runner):
    prefix = f"{runner['kind']}-{uuid.uuid4().hex[:8]}"
    config = write_config(tmp_path, toy_model_dir, collector.store_dsn, runner, prefix)
    proc = subprocess.run([sys.executable, "-m", "tracerl.cli", "train", str(config)], capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "out"
    run_id = json.loads((out / "run.json").read_text())["run_id"]
    client = collector.client()

    def rows(sql):
        return [tuple(r) for r in client.query(sql).result_rows]

    # Every rollout is in the store with its identity; step 1 ran policy version 0, step 2 version 1.
    rollouts = rows(
        "SELECT group_id, policy_version, final_reward, attempt FROM tracerl_rollouts "
        f"WHERE task_id LIKE '{prefix}-%' ORDER BY group_id")
    assert len(rollouts) == 16
    versions = {}
    for group_id, version, reward, attempt in rollouts:
        versions.setdefault(group_id.split("/")[1], set()).add(version)
        assert reward is not None and attempt == 0
    assert versions == {"step1": {"0"}, "step2": {"1"}}

    # The transitions the builder wrote carry the same versions and one call per rollout.
    transitions = rows(
        "SELECT policy_version, count(), countIf(length(response_ids) > 0 AND length(logprobs) = length(response_ids)) "
        f"FROM tracerl_transitions FINAL WHERE task_id LIKE '{prefix}-%' GROUP BY policy_version ORDER BY policy_version")
    assert transitions == [("0", 8, 8), ("1", 8, 8)]

    # The trainer's root spans record the runner and how the attempt ended.
    roots = rows(
        "SELECT SpanAttributes['tracerl.rollout.runner'], SpanAttributes['tracerl.rollout.status'], "
        "SpanAttributes['tracerl.rollout.exit_code'] FROM otel_traces WHERE SpanName = 'tracerl.rollout' "
        f"AND SpanAttributes['tracerl.rollout.task_id'] LIKE '{prefix}-%'")
    assert len(roots) == 16
    assert {r[:2] for r in roots} == {(runner["kind"], "ok")}
    assert {r[2] for r in roots} == ({"0"} if runner["kind"] == "command" else {""})

    # One metrics row per step.
    steps = rows(
        "SELECT step, policy_version, rollouts, rollouts_failed, samples, tokens, update_s > 0, entropy > 0 "
        f"FROM tracerl_train_steps FINAL WHERE run_id = '{run_id}' ORDER BY step")
    assert [s[:5] for s in steps] == [(1, 1, 8, 0, 8), (2, 2, 8, 0, 8)]
    assert all(s[5] > 0 and s[6] and s[7] for s in steps)
    assert len((out / "metrics.jsonl").read_text().splitlines()) == 2

    # The parameters changed, and each checkpoint loads with transformers.
    before = load_file(str(Path(toy_model_dir) / "model.safetensors"))
    after = load_file(str(out / "checkpoints" / "step-2" / "model.safetensors"))
    assert any(not torch.equal(before[name], after[name]) for name in before)
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(out / "checkpoints" / "step-1")
    assert model.config.num_hidden_layers == 2
    assert json.loads((out / "checkpoints" / "step-2" / "trainer_state.json").read_text())["policy_version"] == 2

    # The report: a PNG and an HTML page with the step table.
    report = subprocess.run([sys.executable, "-m", "tracerl.cli", "report", str(out)], capture_output=True, text=True,
                            timeout=120)
    assert report.returncode == 0, report.stderr
    assert (out / "reward.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (out / "report.html").read_text()
    assert page.count("<tr>") == 3 and "reward_mean" in page
