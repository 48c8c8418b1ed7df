"""Each reason a rollout cannot be trained on: counted in the report, queryable in tracerl_builds."""

from tests.transition_builder.trace_kit import TraceKit
from tracerl import semconv


def skipped_trace(store, reason) -> str:
    t = TraceKit()
    if reason == "schema_version_mismatch":
        root = t.rollout("skip", 0, 100, **{semconv.SCHEMA_VERSION_ATTR: "99"})
        t.llm(root, 10, 20, prompt_ids=[1], response_ids=[2])
        t.reward(1.0, root, at=30)
    elif reason == "unfinished_root":  # the root (and the agent span) are still open
        t.llm("open-agent-span", 10, 20, prompt_ids=[1], response_ids=[2])
        t.reward(1.0, "open-root-span", at=30)
    elif reason == "no_reward":
        root = t.rollout("skip", 0, 100)
        t.llm(root, 10, 20, prompt_ids=[1], response_ids=[2])
    elif reason == "no_llm_call_of_selected_agent":
        root = t.rollout("skip", 0, 100)
        t.tool("search", root, 10, 20)
        t.reward(1.0, root, at=30)
    elif reason == "missing_token_ids":
        root = t.rollout("skip", 0, 100)
        t.llm(root, 10, 20, prompt_ids=[1], response_ids=[2])
        t.llm(root, 30, 40, messages=[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}], answer="yo")
        t.reward(1.0, root, at=50)
    t.insert(store)
    return t.trace_id


REASONS = ["schema_version_mismatch", "unfinished_root", "no_reward", "no_llm_call_of_selected_agent",
           "missing_token_ids"]


def test_each_skip_reason_is_counted_and_queryable(store, build):
    traces = {reason: skipped_trace(store, reason) for reason in REASONS}
    transitions, report = build(*traces.values())
    assert transitions == []
    assert dict(report.skipped) == {reason: 1 for reason in REASONS}
    assert report.traces_read == 5 and report.built == 0
    summary = report.summary()
    assert all(f"  {reason}: 1" in summary for reason in REASONS)
    rows = store.query("SELECT trace_id, status, reason, transitions FROM tracerl_builds FINAL"
                       " WHERE trace_id IN {ids:Array(String)}", parameters={"ids": list(traces.values())}).result_rows
    assert {r[0]: r[1:] for r in rows} == {tid: ("skipped", reason, 0) for reason, tid in traces.items()}


def test_current_schema_version_builds(store, build):
    t = TraceKit()
    root = t.rollout("v1", 0, 100, **{semconv.SCHEMA_VERSION_ATTR: semconv.SCHEMA_VERSION})
    t.llm(root, 10, 20, prompt_ids=[1], response_ids=[2], logprobs=[-1.0])
    t.reward(1.0, root, at=30)
    t.insert(store)
    [tr], _ = build(t.trace_id)
    assert tr.response_ids == [2]


def test_a_process_that_is_the_rollout_needs_no_root_span(store, build):
    """One process = one rollout (resource identity, TRACEPARENT parent never stored): finished."""
    t = TraceKit(resource={semconv.ROLLOUT_TASK_ID: "proc-task", semconv.ROLLOUT_ATTEMPT: "3",
                           semconv.ROLLOUT_MODE: "val", semconv.POLICY_VERSION: "v7"})
    t.llm("launcher-span", 10, 20, prompt_ids=[1], response_ids=[2], logprobs=[-0.5])
    t.reward(1.0, "launcher-span", at=30)
    t.insert(store)
    [tr], report = build(t.trace_id)
    assert (tr.task_id, tr.group_id, tr.attempt, tr.mode, tr.policy_version) == ("proc-task", "proc-task", 3, "val", "v7")
    assert report.orphans_repaired == 0  # nothing encloses them and there is no root: left at the top


def test_missing_token_ids_with_a_tokenizer_builds_and_flags_only_that_call(store, build, tokenizer_dir):
    tid = skipped_trace(store, "missing_token_ids")
    transitions, _ = build(tid, tokenizer=tokenizer_dir, rebuild=True)
    assert [tr.flags for tr in transitions] == [["no_logprobs"], ["no_logprobs", "retokenized"]]
