"""OpenAI Agents SDK: a triage agent with a function tool hands off to a refunds agent, run
with ``Runner.run`` (async) and ``Runner.run_sync``. The SDK traces outside OpenTelemetry; the
tracerl plugin mirrors its spans and makes them current, so each OpenAI-client span lands under
the agent that made the call, one trace per run, in this process and as a subprocess under
``opentelemetry-instrument``."""

from __future__ import annotations

import json
import uuid

from tracerl import config, semconv
from tests.fake_openai_server import Reply, token_ids
from tests.instrumentations.agents import openai_agents_handoff
from tests.instrumentations.span_tree import run_script, stored_tree

QUESTION = "Refund my order A17 please"
ANSWER = "Refund of 39.0 approved for A17."


def _replies(n_runs: int):
    """Per run: triage calls the tool, triage hands off, refunds answers. Call ids must differ
    between turns (the SDK rejects a reused one)."""
    out = []
    for run in range(n_runs):
        out += [Reply("", tool_calls=[("lookup_order", {"order_id": "A17"})], call_ids=[f"call_lookup_{run}"]),
                Reply("", tool_calls=[("transfer_to_refunds", {})], call_ids=[f"call_handoff_{run}"]),
                Reply(ANSWER)]
    return out


def _task():
    return {"id": f"refund-{uuid.uuid4().hex[:6]}", "question": QUESTION}


def check_handoff_trace(tree):
    [root] = tree.roots()
    assert root["SpanName"] == semconv.SPAN_ROLLOUT
    assert tree.agents() == ["triage", "refunds"]
    calls = tree.client_calls()
    assert [tree.agent_of(c) for c in calls] == ["triage", "triage", "refunds"], "each call under its agent"
    assert json.loads(calls[-1]["SpanAttributes"][semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids(ANSWER)
    for call in calls:  # one call recorded twice: the SDK's response span is the client span's parent
        wrapper = tree.by_id[call["ParentSpanId"]]
        assert wrapper["ScopeName"] == semconv.SCOPE_OPENAI_AGENTS and tree.op(wrapper) == semconv.OP_CHAT
        assert wrapper["SpanAttributes"][semconv.GEN_AI_RESPONSE_ID] == call["SpanAttributes"][semconv.GEN_AI_RESPONSE_ID]

    [tool] = tree.with_op(semconv.OP_EXECUTE_TOOL)
    assert tree.agent_of(tool) == "triage"
    assert json.loads(tool["SpanAttributes"][semconv.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"order_id": "A17"}
    assert json.loads(tool["SpanAttributes"][semconv.GEN_AI_TOOL_CALL_RESULT]) == openai_agents_handoff.ORDERS["A17"]

    [handoff] = [r for r in tree.rows if r["SpanName"] == semconv.SPAN_HANDOFF]
    assert tree.agent_of(handoff) == "triage"
    assert handoff["SpanAttributes"][semconv.HANDOFF_FROM_AGENT] == "triage"
    assert handoff["SpanAttributes"][semconv.HANDOFF_TO_AGENT] == "refunds"

    triage, refunds = tree.with_op(semconv.OP_INVOKE_AGENT)
    assert tree.variables(triage)[semconv.VAR_AGENT_INPUT] == [{"content": QUESTION, "role": "user"}]
    assert semconv.VAR_AGENT_OUTPUT not in tree.variables(triage)
    assert tree.variables(refunds)[semconv.VAR_AGENT_OUTPUT] == ANSWER


def test_run_and_run_sync_in_process(traced, llm):
    config.set_capture_tokens(True)
    try:
        llm.script(*_replies(2))
        outs = openai_agents_handoff.run(llm.base_url, [_task()])
    finally:
        config.set_capture_tokens(None)
    assert [o["runner"] for o in outs] == ["run", "run_sync"]
    assert all(o["answer"] == ANSWER and o["last_agent"] == "refunds" for o in outs)
    assert outs[0]["trace_id"] != outs[1]["trace_id"]
    traced.flush()
    for out in outs:
        check_handoff_trace(stored_tree(traced.collector, out["trace_id"]))


def test_run_and_run_sync_under_opentelemetry_instrument(collector, llm):
    service = f"openai-agents-{uuid.uuid4().hex[:6]}"
    llm.script(*_replies(2))
    lines, proc = run_script("openai_agents_handoff.py", base_url=llm.base_url, endpoint=collector.grpc_endpoint,
                             env={"AGENT_TASKS": json.dumps([_task()]), "TRACERL_CAPTURE_TOKENS": "1",
                                  "OTEL_SERVICE_NAME": service})
    assert proc.returncode == 0, proc.stderr
    assert [o["runner"] for o in lines] == ["run", "run_sync"]
    for out in lines:
        check_handoff_trace(stored_tree(collector, out["trace_id"]))
    traces = collector.rows("SELECT DISTINCT TraceId FROM otel_traces WHERE ServiceName = {svc:String}", svc=service)
    assert {t["TraceId"] for t in traces} == {o["trace_id"] for o in lines}, "one trace per run, nothing else"
