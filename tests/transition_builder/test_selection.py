"""Agent attribution (nearest agent ancestor) and --agents: the other agents are environment."""

from tests.transition_builder.trace_kit import TraceKit


def two_agent_trace(store):
    """writer (ids 1,2 -> 3), checker (ids 9 -> 10), writer again, whose prompt is the writer's
    first exchange plus the checker's verdict (4, 10) as observation tokens (-> 5, 6)."""
    t = TraceKit()
    root = t.rollout("multi", 0, 200)
    writer = t.agent("writer", root, 1, 50)
    nested = t.span("some chain step", writer, 2, 40)  # attribution looks past non-agent spans
    t.llm(nested, 5, 15, prompt_ids=[1, 2], response_ids=[3], logprobs=[-0.1])
    checker = t.agent("checker", root, 60, 100)
    t.llm(checker, 65, 75, prompt_ids=[9], response_ids=[10], logprobs=[-0.9])
    rewriter = t.agent("writer", root, 110, 150)
    t.llm(rewriter, 115, 125, prompt_ids=[1, 2, 3, 4, 10], response_ids=[5, 6], logprobs=[-0.2, -0.3])
    t.reward(1.0, root, at=190)
    t.insert(store)
    return t


def test_every_call_is_attributed_to_its_nearest_agent(store, build):
    t = two_agent_trace(store)
    transitions, _ = build(t.trace_id)
    assert [(tr.step, tr.agent, tr.prompt_ids) for tr in transitions] == [
        (0, "writer", [1, 2]), (1, "checker", [9]), (2, "writer", [1, 2, 3, 4, 10])]


def test_agents_regex_keeps_only_the_selected_agents(store, build):
    t = two_agent_trace(store)
    transitions, _ = build(t.trace_id, agents="writer")
    assert [(tr.step, tr.agent, tr.response_ids) for tr in transitions] == [(0, "writer", [3]), (1, "writer", [5, 6])]
    # the regex matches whole names: "writer" does not select "rewriter"-like names by accident
    transitions, report = build(t.trace_id, agents="write", rebuild=True)
    assert transitions == [] and dict(report.skipped) == {"no_llm_call_of_selected_agent": 1}


def test_other_agents_output_is_an_observation_in_the_selected_agents_trajectory(store, build):
    t = two_agent_trace(store)
    [tr], _ = build(t.trace_id, agents="writer", aggregate="trajectory")
    assert tr.prompt_ids == [1, 2]
    assert tr.response_ids == [3, 4, 10, 5, 6]
    assert tr.response_mask == [1, 0, 0, 1, 1]
    assert tr.logprobs == [-0.1, 0.0, 0.0, -0.2, -0.3]
    assert tr.flags == ["merged"]
