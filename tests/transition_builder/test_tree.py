"""Span tree: duplicate rows from OTLP retries, orphans re-attached under their tightest enclosure."""

from tests.transition_builder.trace_kit import TraceKit
from tracerl.transition_builder.spans import Span
from tracerl.transition_builder.tree import SpanTree


def span(span_id, parent, start, end, name="s"):
    return Span("t", span_id, parent, name, start, end - start)


def test_orphan_goes_under_the_tightest_enclosing_span_and_is_counted():
    spans = [span("root", "", 0, 100, "tracerl.rollout"), span("agent", "root", 10, 90),
             span("lost-child", "never-arrived", 20, 30), span("outside", "never-arrived", 95, 99)]
    tree = SpanTree(spans)
    assert tree.root.span_id == "root"
    assert tree.parent["lost-child"] == "agent"  # root and agent enclose it; agent is tighter
    assert tree.parent["outside"] == "root"
    assert tree.orphans_repaired == 2


def test_orphaned_subtree_keeps_its_shape():
    spans = [span("root", "", 0, 100, "tracerl.rollout"), span("mid", "gone", 10, 80), span("leaf", "mid", 20, 30)]
    tree = SpanTree(spans)
    assert tree.parent == {"root": "", "mid": "root", "leaf": "mid"}
    assert tree.orphans_repaired == 1


def test_no_root_without_parentless_span():
    tree = SpanTree([span("a", "gone", 0, 10), span("b", "a", 1, 2)])
    assert tree.root is None


def test_orphaned_llm_call_keeps_its_agent_after_repair(store, build):
    t = TraceKit()
    root = t.rollout("orphan", 0, 100)
    solver = t.agent("solver", root, 5, 95)
    t.llm("a-span-that-never-arrived", 10, 20, prompt_ids=[1, 2], response_ids=[3], logprobs=[-0.1])
    t.reward(1.0, root, at=96)
    t.insert(store)
    [transition], report = build(t.trace_id)
    assert transition.agent == "solver"
    assert report.orphans_repaired == 1
    assert solver


def test_duplicate_rows_of_one_span_make_one_transition(store, build):
    t = TraceKit()
    root = t.rollout("dup", 0, 100)
    t.llm(root, 10, 20, prompt_ids=[1, 2], response_ids=[3], logprobs=[-0.1])
    t.reward(1.0, root, at=30)
    t.insert(store)
    t.insert(store, rows=t.rows[1:])  # an exporter retried the batch holding the call and the reward
    [transition], report = build(t.trace_id)
    assert transition.prompt_ids == [1, 2] and transition.response_ids == [3]
    assert report.duplicate_spans == 2
    logged = store.query("SELECT duplicate_spans FROM tracerl_builds FINAL WHERE trace_id = {t:String}",
                         parameters={"t": t.trace_id}).result_rows
    assert logged == [(2,)]
