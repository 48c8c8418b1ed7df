"""The config: defaults, validation errors that name the key, paths relative to the file."""

import re

import pytest

from tracerl.trainer.config import ConfigError, load_config, parse_config
from tracerl.trainer.tasks import TaskError, load_tasks, tasks_for_step

BASE = {"model": "m", "tasks": "t.jsonl", "runner": {"kind": "command", "command": "python agent.py"}}


def with_(**changes):
    data = {**BASE}
    for key, value in changes.items():
        node = data
        parts = key.split("__")
        for part in parts[:-1]:
            node[part] = dict(node.get(part, {}))
            node = node[part]
        node[parts[-1]] = value
    return data


def test_the_issue_example_parses(tmp_path):
    (tmp_path / "c.yaml").write_text("""
model: path/to/hf-model-dir
tasks: tasks.jsonl
group_size: 4
tasks_per_step: 2
steps: 10
optimizer: {lr: 1.0e-5}
algorithm: {advantage: grpo, credit: identical, clip_ratio: 0.2, kl_coef: 0.0}
agents: ".*"
aggregate: transition
runner: {kind: command, command: "python agent.py", concurrency: 4, timeout_s: 120}
store: chdb:///abs/path
output_dir: runs/example
backend: local
""")
    c = load_config(tmp_path / "c.yaml")
    assert c.model == str(tmp_path / "path/to/hf-model-dir") and c.output_dir == str(tmp_path / "runs/example")
    assert (c.group_size, c.optimizer.lr, c.algorithm.advantage, c.runner.timeout_s) == (4, 1e-5, "grpo", 120.0)
    assert c.store == "chdb:///abs/path" and c.algorithm.loss_weighting == "rollout"


@pytest.mark.parametrize("data,message", [
    (with_(runner__comand="x"), "runner.comand: unknown key (did you mean 'command'?)"),
    (with_(group_size="4"), "group_size: expected an integer"),
    (with_(group_size=1), "group_size: grpo needs at least 2"),
    (with_(steps=0), "steps: must be greater than 0"),
    (with_(algorithm__advantage="gae"), "algorithm.advantage: 'gae' is not one of"),
    (with_(algorithm__kl_coef=-1), "algorithm.kl_coef: must not be negative"),
    (with_(optimizer__lr="fast"), "optimizer.lr: expected a number"),
    (with_(agents="(unclosed"), "agents: not a valid regular expression"),
    (with_(runner={"kind": "python"}), "runner.function: required"),
    (with_(runner={"kind": "kubernetes", "command": "x"}), "runner.kubernetes.image: required"),
    (with_(console="yes"), "console: expected true or false"),
    ({"tasks": "t"}, "model: required key missing"),
])
def test_errors_name_the_bad_key(data, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(data)


def test_bad_yaml_and_missing_file(tmp_path):
    (tmp_path / "bad.yaml").write_text("model: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(tmp_path / "bad.yaml")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_tasks_file_and_draw_order(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "a"}\n\n{"id": "b"}\n{"id": "c"}\n')
    tasks = load_tasks(path)
    assert [t["id"] for t in tasks] == ["a", "b", "c"]
    assert sorted(t["id"] for t in tasks_for_step(tasks, 1, 3)) == ["a", "b", "c"]  # each once per epoch
    assert sorted(t["id"] for t in tasks_for_step(tasks, 2, 3)) == ["a", "b", "c"]
    assert tasks_for_step(tasks, 5, 2, seed=1) == tasks_for_step(tasks, 5, 2, seed=1)
    path.write_text('{"id": "a"}\n{"name": "no id"}\n')
    with pytest.raises(TaskError, match=r"tasks.jsonl:2: each task must be a JSON object with an \"id\""):
        load_tasks(path)
    path.write_text('{"id": "a"}\n{"id": "a"}\n')
    with pytest.raises(TaskError, match="duplicate task id"):
        load_tasks(path)
