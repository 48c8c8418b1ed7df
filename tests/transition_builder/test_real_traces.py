"""The builder on real traces: the plain openai agent (a subprocess under opentelemetry-instrument)
and the framework plugins' agents (LangGraph, AutoGen AgentChat, OpenAI Agents SDK), each talking
to the scripted OpenAI-compatible server that returns vLLM-style token ids and logprobs."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.fake_openai_server import FakeOpenAIServer, Reply, logprob, render_chat, token_ids
from tests.otel_session import traced  # noqa: F401  (fixture)
from tests.sdk.agent_runner import run_agent
from tracerl import config


@pytest.fixture
def llm():
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def capture_tokens():
    config.set_capture_tokens(True)
    yield
    config.set_capture_tokens(None)


def test_plain_agent_rollouts(collector, llm, build):
    tasks = [{"id": "add-1", "question": "2 + 2?", "expected": "4"}, {"id": "add-2", "question": "3 + 3?", "expected": "6"}]
    llm.script(Reply("4"), Reply("4"), Reply("5"), Reply("7"))
    printed, proc = run_agent(base_url=llm.base_url, endpoint=collector.grpc_endpoint, instrument=True,
                              env={"OTEL_SERVICE_NAME": f"tb-plain-{uuid.uuid4().hex[:6]}",
                                   "AGENT_TASKS": json.dumps(tasks), "TRACERL_CAPTURE_TOKENS": "1"})
    assert proc.returncode == 0, proc.stderr
    transitions, report = build(*(p["trace_id"] for p in printed))
    assert report.built == 2 and report.double_recorded == 0
    for line, task, reward, answers in zip(printed, tasks, [1.0, 0.0], [("4", "4"), ("5", "7")]):
        mine = [t for t in transitions if t.trace_id == line["trace_id"]]
        first = [{"role": "user", "content": task["question"]}]
        second = first + [{"role": "assistant", "content": answers[0]}, {"role": "user", "content": "Sure?"}]
        assert [(t.step, t.agent, t.task_id, t.group_id, t.mode) for t in mine] == [
            (0, "solver", task["id"], task["id"], "train"), (1, "solver", task["id"], task["id"], "train")]
        assert [t.prompt_ids for t in mine] == [token_ids(render_chat(first)), token_ids(render_chat(second))]
        assert [t.response_ids for t in mine] == [token_ids(a) for a in answers]
        assert [t.logprobs for t in mine] == [[pytest.approx(logprob(0))]] * 2
        assert [(t.reward, t.credit, t.flags) for t in mine] == [(reward, reward, [])] * 2


LANGGRAPH_REPLIES = ["```sql\nSELECT name FROM singer WHERE country = 'France'\n```",
                     "It lists names instead of counting. THE QUERY IS INCORRECT",
                     "SELECT count(*) FROM singer WHERE country = 'France'", "THE QUERY IS CORRECT"]


def test_langgraph_sql_workflow(traced, llm, capture_tokens, build, tmp_path):  # noqa: F811
    from tests.instrumentations.agents import langgraph_sql

    database = str(tmp_path / "spider.sqlite")
    langgraph_sql.make_database(database)
    llm.script(*(Reply(text) for text in LANGGRAPH_REPLIES))
    [out] = langgraph_sql.run(llm.base_url, database, [{"id": f"sql-{uuid.uuid4().hex[:6]}",
                                                         "question": "How many singers are from France?",
                                                         "gold": "SELECT count(*) FROM singer WHERE country = 'France'"}])
    traced.flush()
    transitions, report = build(out["trace_id"])
    assert [t.agent for t in transitions] == ["writer", "checker", "rewriter", "checker"]
    assert [t.response_ids for t in transitions] == [token_ids(text) for text in LANGGRAPH_REPLIES]
    assert report.double_recorded == 4  # LangChain's chat-model span over each client span
    assert {t.reward for t in transitions} == {1.0}
    selected, _ = build(out["trace_id"], agents="writer|rewriter", rebuild=True)
    assert [(t.step, t.agent) for t in selected] == [(0, "writer"), (1, "rewriter")]


def test_autogen_assistant_with_a_tool(traced, llm, capture_tokens, build, tokenizer_dir):  # noqa: F811
    """The scripted server returns no token ids for a tool-call-only reply (a real engine returns
    the tool call's tokens), so that call has prompt ids but no response ids: the rollout is
    skipped without a tokenizer, and with one that call alone is re-tokenized and flagged."""
    from tests.instrumentations.agents import autogen_calc

    llm.script(Reply("", tool_calls=[("calculator", {"expression": "17 * 23"})], call_ids=["call_calc"]),
               Reply("17 * 23 = 391"))
    [out] = autogen_calc.run(llm.base_url, [{"id": f"calc-{uuid.uuid4().hex[:6]}", "question": "What is 17 * 23?",
                                             "expected": "391"}])
    traced.flush()
    transitions, report = build(out["trace_id"])
    assert transitions == [] and dict(report.skipped) == {"missing_token_ids": 1}
    transitions, _ = build(out["trace_id"], tokenizer=tokenizer_dir)
    assert [(t.step, t.agent) for t in transitions] == [(0, "math_solver"), (1, "math_solver")]
    assert [t.flags for t in transitions] == [["no_logprobs", "retokenized"], []]
    assert transitions[1].response_ids == token_ids("17 * 23 = 391")
    assert {t.reward for t in transitions} == {1.0}


def test_openai_agents_handoff_scored_after_the_fact(traced, llm, capture_tokens, store, build,  # noqa: F811
                                                    tokenizer_dir):
    from tests.instrumentations.agents import openai_agents_handoff
    from tracerl.transition_builder.offline_reward import write_reward

    llm.script(Reply("", tool_calls=[("lookup_order", {"order_id": "A17"})], call_ids=["call_lookup_0"]),
               Reply("", tool_calls=[("transfer_to_refunds", {})], call_ids=["call_handoff_0"]),
               Reply("Your refund for order A17 is on its way."))
    out = openai_agents_handoff.run_sync(llm.base_url, {"id": f"refund-{uuid.uuid4().hex[:6]}",
                                                        "question": "Refund order A17"})
    traced.flush()
    transitions, report = build(out["trace_id"])
    assert transitions == [] and dict(report.skipped) == {"no_reward": 1}  # the agent scores nothing itself
    write_reward(store, out["trace_id"], 0.5, components={"polite": 1.0})
    transitions, report = build(out["trace_id"])
    assert dict(report.skipped) == {"missing_token_ids": 1}  # the tool-call replies: see the AutoGen test
    transitions, _ = build(out["trace_id"], tokenizer=tokenizer_dir)
    assert [t.agent for t in transitions] == ["triage", "triage", "refunds"]
    # the answer's ids are captured; this run brings no logprobs with them, which is flagged too
    assert [t.flags for t in transitions] == [["no_logprobs", "retokenized"]] * 2 + [["no_logprobs"]]
    assert [t.attempt for t in transitions] == [1, 1, 1]
    assert transitions[-1].response_ids == token_ids("Your refund for order A17 is on its way.")
    assert {(t.reward, t.credit) for t in transitions} == {(0.5, 0.5)}
