"""Trajectory aggregation: which calls merge, and the exact response mask and logprobs."""

from tests.transition_builder.trace_kit import TraceKit
from tracerl.transition_builder.aggregate import aggregate
from tracerl.transition_builder.tokens import CallTokens


def test_three_calls_merge_with_masks_over_each_observation():
    calls = [CallTokens([1, 2], [3, 4], [-0.1, -0.2]),
             CallTokens([1, 2, 3, 4, 50, 51], [5], [-0.3]),  # observation 50 51
             CallTokens([1, 2, 3, 4, 50, 51, 5, 60], [6, 7], [-0.4, -0.5])]  # observation 60
    [sample] = aggregate(["a"] * 3, calls, "trajectory")
    assert sample.prompt_ids == [1, 2]
    assert sample.response_ids == [3, 4, 50, 51, 5, 60, 6, 7]
    assert sample.response_mask == [1, 1, 0, 0, 1, 0, 1, 1]
    assert sample.logprobs == [-0.1, -0.2, 0.0, 0.0, -0.3, 0.0, -0.4, -0.5]
    assert sample.call_indexes == [0, 1, 2] and sample.flags == {"merged"}
    assert calls[0].response_ids == [3, 4], "the calls' own id lists are left as they were"


def test_a_call_that_does_not_extend_the_previous_prompt_starts_a_new_sample():
    calls = [CallTokens([1, 2], [3], [-0.1]),
             CallTokens([1, 2, 9, 4], [5], [-0.2]),  # the previous response (3) is not in this prompt
             CallTokens([1, 2, 9, 4, 5], [6], [-0.3])]  # extends the second call with no observation
    samples = aggregate(["a"] * 3, calls, "trajectory")
    assert [(s.prompt_ids, s.response_ids, s.response_mask) for s in samples] == [
        ([1, 2], [3], [1]), ([1, 2, 9, 4], [5, 6], [1, 1])]


def test_merging_is_per_agent_and_transition_mode_never_merges():
    calls = [CallTokens([1], [2], [-0.1]), CallTokens([1, 2], [3], [-0.1]), CallTokens([1, 2], [4], [-0.1])]
    samples = aggregate(["a", "b", "a"], calls, "trajectory")  # b's call has a's prefix but is b's
    assert [(s.agent, s.call_indexes) for s in samples] == [("a", [0, 2]), ("b", [1])]
    assert len(aggregate(["a", "a", "a"], calls, "transition")) == 3


def test_a_merged_call_without_logprobs_drops_the_samples_logprobs():
    calls = [CallTokens([1], [2], [-0.1]), CallTokens([1, 2, 7], [3], [], ("no_logprobs",))]
    [sample] = aggregate(["a", "a"], calls, "trajectory")
    assert sample.logprobs == [] and sample.flags == {"merged", "no_logprobs"}
    assert sample.response_mask == [1, 0, 1]


def test_trajectory_from_the_store_with_a_tool_between_calls(store, build):
    t = TraceKit()
    root = t.rollout("traj", 0, 100)
    agent = t.agent("coder", root, 1, 99)
    t.llm(agent, 10, 20, prompt_ids=[100, 101], response_ids=[102, 103], logprobs=[-1.0, -2.0])
    t.tool("run_tests", agent, 21, 29)
    t.llm(agent, 30, 40, prompt_ids=[100, 101, 102, 103, 900, 901, 902], response_ids=[104], logprobs=[-3.0])
    t.reward(1.0, root, at=50)
    t.insert(store)
    [tr], _ = build(t.trace_id, aggregate="trajectory")
    assert (tr.prompt_ids, tr.response_ids) == ([100, 101], [102, 103, 900, 901, 902, 104])
    assert tr.response_mask == [1, 1, 0, 0, 0, 1]
    assert tr.logprobs == [-1.0, -2.0, 0.0, 0.0, 0.0, -3.0]
    stored = store.query("SELECT response_mask, logprobs, flags FROM tracerl_transitions FINAL"
                         " WHERE trace_id = {t:String}", parameters={"t": t.trace_id}).result_rows
    assert stored == [([1, 1, 0, 0, 0, 1], [-1.0, -2.0, 0.0, 0.0, 0.0, -3.0], ["merged"])]
