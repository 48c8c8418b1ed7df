"""The README's "Debugging rewards with SQL" queries, run against the shipped views on a known set
of rollouts, and `tracerl build` as a command on a store of its own (default selection, summary,
rebuild idempotency, --out files, --since / --where)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.collector_proc import CollectorProcess
from tests.transition_builder.trace_kit import TraceKit, text_message

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_queries() -> list[str]:
    text = README.read_text()
    section = text.split("## Debugging rewards with SQL", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, re.S)


def rollout(store, task, reward, answer, *, components=None, tool=False, agent="solver", ids=True,
            output_tokens=1) -> str:
    t = TraceKit(service="views")
    root = t.rollout(task, 0, 100)
    a = t.agent(agent, root, 1, 90)
    if tool:
        t.tool("calculator", a, 2, 4)
    if ids:
        t.llm(a, 5, 20, prompt_ids=[1, 2], response_ids=list(range(output_tokens)),
              logprobs=[-0.1] * output_tokens, answer=answer)
    else:
        t.llm(a, 5, 20, messages=[text_message("user", "question")], answer=answer)
    if reward is not None:
        t.reward(reward, root, at=95, **(components or {}))
    t.insert(store)
    return t.trace_id


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    proc = CollectorProcess(tmp_path_factory.mktemp("views") / "store").start()
    store = proc.client()
    traces = {
        "A": rollout(store, "add", 1.0, "4", components={"correct": 1.0, "brevity": 0.5}),
        "B": rollout(store, "add", 0.0, "The answer is 5", components={"correct": 0.0, "brevity": 1.0},
                     tool=True, output_tokens=12),
        "C": rollout(store, "sql", 0.95, "SELECT name FROM users", components={"correct": 1.0}, tool=True,
                     output_tokens=25),
        "D": rollout(store, "sql", 0.9, "SELECT 1", components={"correct": 1.0, "judge": 0.8}, agent="writer",
                     ids=False),
        "E": rollout(store, "sql", None, "unscored"),
    }
    yield proc, traces
    proc.stop()


def cli(proc, *args):
    return subprocess.run([sys.executable, "-m", "tracerl.cli", *args, "--store", proc.store_dsn],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def built(views, tokenizer_dir):
    proc, traces = views
    done = cli(proc, "build", "--tokenizer", tokenizer_dir)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_build_command_summary(built):
    assert "traces read: 5" in built and "built: 4" in built and "transitions written: 4" in built
    assert "  no_reward: 1" in built


def test_readme_has_the_queries():
    assert len(readme_queries()) >= 6


def test_reward_distribution_per_task(views, built):
    proc, _ = views
    assert proc.rows(readme_queries()[0]) == [
        {"task_id": "add", "rollouts": 2, "mean_reward": 0.5, "min_reward": 0.0, "max_reward": 1.0, "unscored": 0},
        {"task_id": "sql", "rollouts": 3, "mean_reward": 0.925, "min_reward": 0.9, "max_reward": 0.95,
         "unscored": 1}]


def test_high_reward_without_tool_call(views, built):
    proc, traces = views
    rows = proc.rows(readme_queries()[1])
    assert [(r["trace_id"], r["final_reward"], r["llm_calls"]) for r in rows] == [
        (traces["A"], 1.0, 1), (traces["D"], 0.9, 1)]


def test_short_answers_that_scored(views, built):
    proc, traces = views
    assert proc.rows(readme_queries()[2]) == [
        {"trace_id": traces["A"], "task_id": "add", "final_reward": 1.0, "last_response": "4"}]


def test_reward_against_response_length(views, built):
    proc, _ = views
    # A: 1 token, D: none recorded (retokenized later) -> bucket 0; B: 12 -> 10; C: 25 -> 20
    assert proc.rows(readme_queries()[3]) == [
        {"output_tokens_from": 0, "rollouts": 2, "mean_reward": 0.95},
        {"output_tokens_from": 10, "rollouts": 1, "mean_reward": 0.0},
        {"output_tokens_from": 20, "rollouts": 1, "mean_reward": 0.95}]


def test_component_breakdown(views, built):
    proc, _ = views
    assert [tuple(r.values()) for r in proc.rows(readme_queries()[4])] == [
        ("add", "brevity", 0.75, 2), ("add", "correct", 0.5, 2), ("sql", "correct", 1.0, 2), ("sql", "judge", 0.8, 1)]


def test_retokenized_share_per_agent(views, built):
    proc, _ = views
    assert proc.rows(readme_queries()[5]) == [
        {"agent": "solver", "transitions": 3, "retokenized_share": 0.0},
        {"agent": "writer", "transitions": 1, "retokenized_share": 1.0}]


def test_why_rollouts_did_not_train(views, built):
    proc, _ = views
    assert proc.rows(readme_queries()[6]) == [
        {"status": "built", "reason": "", "traces": 4}, {"status": "skipped", "reason": "no_reward", "traces": 1}]


def test_llm_calls_and_rewards_views(views, built):
    proc, traces = views
    [call] = proc.rows("SELECT convention, model, response_token_count, has_token_ids, response_text"
                       " FROM tracerl_llm_calls WHERE trace_id = {t:String}", t=traces["B"])
    assert call == {"convention": "genai", "model": "policy", "response_token_count": 12, "has_token_ids": True,
                    "response_text": "The answer is 5"}
    [reward] = proc.rows("SELECT name, value, components, source FROM tracerl_rewards WHERE trace_id = {t:String}",
                         t=traces["D"])
    assert reward == {"name": "reward", "value": 0.9, "components": {"correct": 1.0, "judge": 0.8}, "source": ""}


def test_build_again_is_idempotent_and_rebuild_replaces(views, built, tokenizer_dir, tmp_path):
    proc, traces = views
    again = cli(proc, "build", "--tokenizer", tokenizer_dir)
    assert "traces read: 1" in again.stdout and "transitions written: 0" in again.stdout  # only E, still unscored
    count = "SELECT count() AS n, sum(credit) AS credit FROM tracerl_transitions FINAL"
    assert proc.rows(count) == [{"n": 4, "credit": pytest.approx(2.85)}]
    out = tmp_path / "t.jsonl"
    done = cli(proc, "build", "--rebuild", "--tokenizer", tokenizer_dir, "--where", "task_id = 'add'",
               "--credit", "discounted", "--gamma", "0.5", "--since", "1h", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "traces read: 2" in done.stdout and "transitions written: 2" in done.stdout
    assert proc.rows(count) == [{"n": 4, "credit": pytest.approx(2.85)}]  # one sample each: credit = R
    assert proc.rows("SELECT count() AS n FROM tracerl_transitions") == [{"n": 4}]  # old rows deleted, not folded
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["trace_id"] for r in records) == sorted([traces["A"], traces["B"]])
    assert {r["credit_strategy"] for r in records} == {"discounted"}
    none = cli(proc, "build", "--rebuild", "--since", "1s", "--where", "task_id = 'add'")
    assert "traces read: 0" in none.stdout  # the rollouts started seconds before the 1s window


def test_parquet_output_has_the_table_columns(views, built, tmp_path):
    import pyarrow.parquet as pq

    from tracerl.transition_builder import COLUMNS

    proc, traces = views
    out = tmp_path / "t.parquet"
    done = cli(proc, "build", "--trace", traces["A"], "--rebuild", "--out", str(out))
    assert done.returncode == 0, done.stderr
    table = pq.read_table(out)
    assert table.column_names == list(COLUMNS)
    [row] = table.to_pylist()
    assert (row["trace_id"], row["prompt_ids"], row["response_ids"], row["response_mask"]) == (
        traces["A"], [1, 2], [0], [1])


def test_bad_options_are_clear_errors(views):
    proc, _ = views
    done = cli(proc, "build", "--credit", "nope")
    assert done.returncode == 2 and "unknown credit strategy" in done.stderr
    done = cli(proc, "build", "--since", "yesterday")
    assert done.returncode == 2 and "duration" in done.stderr
