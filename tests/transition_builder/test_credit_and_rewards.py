"""Rewards (final, components, intermediate, after the fact) and each credit strategy, with the
credits worked out by hand."""

import subprocess
import sys

import pytest

from tests.transition_builder.trace_kit import TraceKit
from tracerl.transition_builder.credit import STRATEGIES, assign_credit


def three_step_trace(store):
    """Calls at 10, 30, 50 ms; intermediate rewards 0.2 (after call 0) and 0.5 (after call 1, named
    differently); the final reward 1.0 after the last call."""
    t = TraceKit()
    root = t.rollout("credit", 0, 100)
    agent = t.agent("solver", root, 1, 99)
    t.llm(agent, 10, 20, prompt_ids=[1], response_ids=[2], logprobs=[-0.1])
    t.reward(0.2, root, at=25)
    t.llm(agent, 30, 40, prompt_ids=[1, 2, 7], response_ids=[3], logprobs=[-0.2])
    t.reward(0.5, agent, at=45, name="step_check")
    t.llm(agent, 50, 60, prompt_ids=[1, 2, 7, 3, 8], response_ids=[4], logprobs=[-0.3])
    t.reward(1.0, root, at=90, correct=1.0, brevity=0.5)
    t.insert(store)
    return t


def test_registry_formulas():
    assert sorted(STRATEGIES) == ["discounted", "identical", "stepwise"]
    assert assign_credit("identical", [0.2, 0.5, 0.0], 1.0) == [1.0, 1.0, 1.0]
    assert assign_credit("discounted", [0.2, 0.5, 0.0], 1.0, gamma=0.5) == [0.25, 0.5, 1.0]
    assert assign_credit("stepwise", [0.2, 0.5, 0.0], 1.0) == pytest.approx([1.2, 1.5, 1.0])
    with pytest.raises(ValueError, match="unknown credit strategy"):
        assign_credit("nope", [], 1.0)


@pytest.mark.parametrize("credit, gamma, expected", [
    ("identical", 1.0, [1.0, 1.0, 1.0]),
    ("discounted", 0.5, [0.25, 0.5, 1.0]),  # gamma^(T-1-t) * R
    ("stepwise", 1.0, [1.2, 1.5, 1.0]),  # r_t + R
])
def test_each_strategy_on_a_stored_rollout(store, build, credit, gamma, expected):
    t = three_step_trace(store)
    transitions, _ = build(t.trace_id, credit=credit, gamma=gamma)
    assert [tr.credit for tr in transitions] == pytest.approx(expected)
    assert [tr.reward for tr in transitions] == [1.0, 1.0, 1.0]
    assert [tr.step_reward for tr in transitions] == pytest.approx([0.2, 0.5, 0.0])
    assert {tr.credit_strategy for tr in transitions} == {credit}


def test_credit_counts_merged_samples_as_steps(store, build):
    t = three_step_trace(store)
    [tr], _ = build(t.trace_id, credit="stepwise", aggregate="trajectory")
    assert tr.step_reward == pytest.approx(0.7) and tr.credit == pytest.approx(1.7)
    [tr], _ = build(t.trace_id, credit="discounted", gamma=0.5, aggregate="trajectory", rebuild=True)
    assert tr.credit == 1.0  # one step: the last


def test_intermediate_reward_goes_to_the_call_before_it_even_when_calls_interleave(store, build):
    t = TraceKit()
    root = t.rollout("attach", 0, 100)
    t.reward(0.9, root, at=5)  # before any call: attached to nothing
    t.llm(root, 10, 30, prompt_ids=[1], response_ids=[2], logprobs=[-0.1])
    t.llm(root, 20, 25, prompt_ids=[5], response_ids=[6], logprobs=[-0.1])  # started later, ended first
    t.reward(0.3, root, at=35)  # after both ended: the latest to end is the first call (30 ms)
    t.llm(root, 40, 50, prompt_ids=[1, 2], response_ids=[3], logprobs=[-0.1])
    t.reward(0.0, root, at=60)
    t.insert(store)
    transitions, _ = build(t.trace_id, credit="stepwise")
    assert [tr.step_reward for tr in transitions] == [0.3, 0.0, 0.0]
    assert [tr.credit for tr in transitions] == [0.3, 0.0, 0.0]


def reward_cli(collector, *args):
    return subprocess.run([sys.executable, "-m", "tracerl.cli", "reward", *args, "--store", collector.store_dsn],
                          capture_output=True, text=True, timeout=60)


def test_reward_after_the_fact_scores_an_unrewarded_trace(collector, store, build):
    t = TraceKit()
    root = t.rollout("offline", 0, 100)
    t.llm(root, 10, 20, prompt_ids=[1], response_ids=[2], logprobs=[-0.1])
    t.insert(store)
    transitions, report = build(t.trace_id)
    assert transitions == [] and dict(report.skipped) == {"no_reward": 1}

    done = reward_cli(collector, t.trace_id, "0.75", "--component", "judge=0.75")
    assert done.returncode == 0, done.stderr
    [row] = collector.rows("SELECT parent_span_id, name, value, components, source FROM tracerl_rewards"
                           " WHERE trace_id = {t:String}", t=t.trace_id)
    assert row == {"parent_span_id": root, "name": "reward", "value": 0.75, "components": {"judge": 0.75},
                   "source": "offline"}
    [tr], report = build(t.trace_id)  # skipped before, so selected again without --rebuild
    assert (tr.reward, tr.credit, report.built) == (0.75, 0.75, 1)


def test_reward_after_the_fact_overrides_the_agents_own_and_rebuild_replaces(collector, store, build):
    t = TraceKit()
    root = t.rollout("rescore", 0, 100)
    t.llm(root, 10, 20, prompt_ids=[1], response_ids=[2], logprobs=[-0.1])
    t.reward(0.0, root, at=30)
    t.insert(store)
    [tr], _ = build(t.trace_id)
    assert tr.reward == 0.0
    assert reward_cli(collector, t.trace_id, "1").returncode == 0
    again, report = build(t.trace_id)
    assert again == [] and report.already_built == 1
    [tr], _ = build(t.trace_id, rebuild=True)
    assert (tr.reward, tr.step_reward, tr.credit) == (1.0, 0.0, 1.0)
    stored = collector.rows("SELECT reward FROM tracerl_transitions FINAL WHERE trace_id = {t:String}", t=t.trace_id)
    assert stored == [{"reward": 1.0}]


def test_reward_for_an_unknown_trace_is_a_clear_error(collector):
    done = reward_cli(collector, "0" * 32, "1")
    assert done.returncode == 2 and "no span of trace" in done.stderr
