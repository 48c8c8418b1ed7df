"""LangGraph: a Spider-shaped SQL workflow (writer -> SQL tool -> checker -> rewriter -> ...)
traced by the tracerl LangChain plugin into the real collector, in this process and as a
subprocess under ``opentelemetry-instrument``; the stored trace is read back with SQL."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

import tracerl
from tracerl import config, semconv
from tests.fake_openai_server import Reply, token_ids
from tests.instrumentations.agents import langgraph_sql
from tests.instrumentations.span_tree import run_script, stored_tree

QUESTION = "How many singers are from France?"
GOLD = "SELECT count(*) FROM singer WHERE country = 'France'"
WRONG = "SELECT name FROM singer WHERE country = 'France'"
# writer, checker (rejects), rewriter, checker (accepts)
REPLIES = [f"```sql\n{WRONG}\n```", "It lists names instead of counting. THE QUERY IS INCORRECT",
           GOLD, "THE QUERY IS CORRECT"]
CALL_AGENTS = ["writer", "checker", "rewriter", "checker"]
SERVICE = f"langgraph-sql-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def database(tmp_path):
    path = str(tmp_path / "spider.sqlite")
    langgraph_sql.make_database(path)
    return path


def _task():
    return {"id": f"sql-{uuid.uuid4().hex[:6]}", "question": QUESTION, "gold": GOLD}


def check_sql_trace(tree, answer_rows=2):
    """The shape every LangGraph SQL rollout must have in the store."""
    [root] = tree.roots()
    assert root["SpanName"] == semconv.SPAN_ROLLOUT
    assert tree.agents() == ["writer", "execute", "checker", "rewriter", "execute", "checker", "answer"]
    for agent in tree.with_op(semconv.OP_INVOKE_AGENT):
        assert agent["ParentSpanId"] == root["SpanId"], "each node is an agent span directly under the rollout"

    calls = tree.client_calls()
    assert [tree.agent_of(c) for c in calls] == CALL_AGENTS, "each LLM call under the node that made it"
    for call, text in zip(calls, REPLIES):
        assert json.loads(call["SpanAttributes"][semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids(text)
        # one call recorded twice: LangChain's record is the client span's parent, same response id
        wrapper = tree.by_id[call["ParentSpanId"]]
        assert wrapper["ScopeName"] == semconv.SCOPE_LANGCHAIN
        assert tree.op(wrapper) == semconv.OP_CHAT
        assert wrapper["SpanAttributes"][semconv.GEN_AI_RESPONSE_ID] == call["SpanAttributes"][semconv.GEN_AI_RESPONSE_ID]

    tools = tree.with_op(semconv.OP_EXECUTE_TOOL)
    assert [tree.agent_of(t) for t in tools] == ["execute", "execute"]
    assert [json.loads(t["SpanAttributes"][semconv.GEN_AI_TOOL_CALL_ARGUMENTS]) for t in tools] == \
        [{"query": WRONG}, {"query": GOLD}]
    assert [t["SpanAttributes"][semconv.GEN_AI_TOOL_CALL_RESULT] for t in tools] == \
        ['[["Justin Brown"], ["Rose White"]]', f"[[{answer_rows}]]"]

    writer = tree.with_op(semconv.OP_INVOKE_AGENT)[0]
    variables = tree.variables(writer)
    assert variables[semconv.VAR_AGENT_INPUT] == {"question": QUESTION}
    assert variables[semconv.VAR_AGENT_OUTPUT] == {"query": WRONG, "rewrites": 0}
    [reward] = [r for r in tree.rows if r["SpanName"] == semconv.SPAN_REWARD]
    assert reward["SpanAttributes"][semconv.REWARD_VALUE] == "1"
    assert reward["ParentSpanId"] == root["SpanId"], "no node span left current after the graph returned"


def test_langgraph_sql_workflow_in_process(traced, llm, database):
    config.set_capture_tokens(True)
    try:
        llm.script(*(Reply(text) for text in REPLIES))
        [out] = langgraph_sql.run(llm.base_url, database, [_task()])
    finally:
        config.set_capture_tokens(None)
    assert out["answer"] == "[[2]]"
    traced.flush()
    check_sql_trace(stored_tree(traced.collector, out["trace_id"]))


def test_langgraph_sql_workflow_under_opentelemetry_instrument(collector, llm, database):
    llm.script(*(Reply(text) for text in REPLIES))
    lines, proc = run_script("langgraph_sql.py", base_url=llm.base_url, endpoint=collector.grpc_endpoint,
                             env={"SQL_DB": database, "AGENT_TASKS": json.dumps([_task()]),
                                  "TRACERL_CAPTURE_TOKENS": "1", "OTEL_SERVICE_NAME": SERVICE})
    assert proc.returncode == 0, proc.stderr
    [out] = lines
    assert out["answer"] == "[[2]]"
    tree = stored_tree(collector, out["trace_id"])
    check_sql_trace(tree)
    # the whole rollout is one trace and nothing of it landed elsewhere
    assert collector.rows("SELECT uniqExact(TraceId) AS n FROM otel_traces WHERE ServiceName = {svc:String}", svc=SERVICE)[0]["n"] == 1


def test_langgraph_async_rollouts_run_concurrently_stay_apart(traced, llm, database):
    """``ainvoke`` runs a sync node in a worker thread and starts and ends its run in different
    tasks: two rollouts at once must still each get their own tree, and the caller's context
    must not keep a node span current afterwards."""
    from opentelemetry import trace

    llm.default = Reply("THE QUERY IS CORRECT")  # writer's "query" fails to run; checker accepts
    graph = langgraph_sql.build_graph(llm.base_url, database)

    async def one(i):
        with tracerl.rollout(task_id=f"async-{i}", task={"i": i}) as r:
            await graph.ainvoke({"question": f"question {i}"})
            current = trace.get_current_span()
        assert current is r.span
        return r.trace_id

    async def both():
        return await asyncio.gather(one(0), one(1))

    trace_ids = asyncio.run(both())
    traced.flush()
    for trace_id in trace_ids:
        tree = stored_tree(traced.collector, trace_id)
        [root] = tree.roots()
        assert root["SpanName"] == semconv.SPAN_ROLLOUT
        assert sorted(tree.agents()) == ["answer", "checker", "execute", "writer"]
        assert all(a["ParentSpanId"] == root["SpanId"] for a in tree.with_op(semconv.OP_INVOKE_AGENT))
        assert [tree.agent_of(c) for c in tree.client_calls()] == ["writer", "checker"]
        assert [tree.agent_of(t) for t in tree.with_op(semconv.OP_EXECUTE_TOOL)] == ["execute"]


def test_runnable_marked_as_agent_outside_langgraph(traced, llm):
    """A plain LangChain chain becomes an agent through its metadata; the chains nested in it
    inherit that metadata and do not open a second agent span."""
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_openai import ChatOpenAI

    llm.script(Reply("a plan"))
    model = ChatOpenAI(model="policy", base_url=llm.base_url, api_key="sk-test", max_retries=0)
    chain = (ChatPromptTemplate.from_messages([("user", "Plan: {goal}")]) | model).with_config(
        run_name="chain", metadata={semconv.LANGCHAIN_AGENT_METADATA: "planner"})
    with tracerl.rollout(task_id=f"plan-{uuid.uuid4().hex[:6]}", task={"goal": "x"}) as r:
        assert chain.invoke({"goal": "ship it"}).content == "a plan"
    traced.flush()
    tree = stored_tree(traced.collector, r.trace_id)
    assert tree.agents() == ["planner"]
    [call] = tree.client_calls()
    assert tree.agent_of(call) == "planner"
    [agent] = tree.with_op(semconv.OP_INVOKE_AGENT)
    assert tree.variables(agent)[semconv.VAR_AGENT_INPUT] == {"goal": "ship it"}
    assert tree.variables(agent)[semconv.VAR_AGENT_OUTPUT]["content"] == "a plan"
