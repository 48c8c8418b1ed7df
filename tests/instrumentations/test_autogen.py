"""AutoGen AgentChat: an AssistantAgent with a calculator tool solves a math question in two
model calls. AutoGen's own agent and tool spans plus tracerl's additions (tool arguments and
result, agent input and output) and the OpenAI-client spans land in one trace, in this process
and as a subprocess under ``opentelemetry-instrument``."""

from __future__ import annotations

import json
import uuid

from tracerl import config, semconv
from tests.fake_openai_server import Reply, token_ids
from tests.instrumentations.agents import autogen_calc
from tests.instrumentations.span_tree import run_script, stored_tree

QUESTION = "What is 17 * 23?"
ANSWER = "17 * 23 = 391"


def _replies():
    return [Reply("", tool_calls=[("calculator", {"expression": "17 * 23"})], call_ids=["call_calc"]),
            Reply(ANSWER)]


def _task():
    return {"id": f"calc-{uuid.uuid4().hex[:6]}", "question": QUESTION, "expected": "391"}


def check_calc_trace(tree):
    [root] = tree.roots()
    assert root["SpanName"] == semconv.SPAN_ROLLOUT
    [agent] = tree.with_op(semconv.OP_INVOKE_AGENT)
    assert agent["SpanAttributes"][semconv.GEN_AI_AGENT_NAME] == "math_solver"
    assert agent["ParentSpanId"] == root["SpanId"]

    calls = tree.client_calls()
    assert len(calls) == 2
    assert all(c["ParentSpanId"] == agent["SpanId"] for c in calls), "both model calls directly under the agent"
    first, second = (c["SpanAttributes"] for c in calls)
    assert json.loads(first[semconv.GEN_AI_OUTPUT_MESSAGES])[0]["parts"][0]["name"] == "calculator"
    assert json.loads(second[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids(ANSWER)

    [tool] = tree.with_op(semconv.OP_EXECUTE_TOOL)
    assert tool["ParentSpanId"] == agent["SpanId"]
    attrs = tool["SpanAttributes"]
    assert attrs[semconv.GEN_AI_TOOL_NAME] == "calculator"
    assert attrs[semconv.GEN_AI_TOOL_CALL_ID] == "call_calc"
    assert json.loads(attrs[semconv.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"expression": "17 * 23"}
    assert attrs[semconv.GEN_AI_TOOL_CALL_RESULT] == "391"
    # tool runs between the two calls
    order = [r["SpanId"] for r in tree.rows]
    assert order.index(calls[0]["SpanId"]) < order.index(tool["SpanId"]) < order.index(calls[1]["SpanId"])

    variables = tree.variables(agent)
    assert variables[semconv.VAR_AGENT_INPUT] == [{"source": "user", "type": "TextMessage", "content": QUESTION}]
    assert variables[semconv.VAR_AGENT_OUTPUT]["content"] == ANSWER


def test_assistant_agent_with_tool_in_process(traced, llm):
    config.set_capture_tokens(True)
    try:
        llm.script(*_replies())
        [out] = autogen_calc.run(llm.base_url, [_task()])
    finally:
        config.set_capture_tokens(None)
    assert out["answer"] == ANSWER
    traced.flush()
    check_calc_trace(stored_tree(traced.collector, out["trace_id"]))


def test_assistant_agent_under_opentelemetry_instrument(collector, llm):
    service = f"autogen-calc-{uuid.uuid4().hex[:6]}"
    llm.script(*_replies())
    lines, proc = run_script("autogen_calc.py", base_url=llm.base_url, endpoint=collector.grpc_endpoint,
                             env={"AGENT_TASKS": json.dumps([_task()]), "TRACERL_CAPTURE_TOKENS": "1",
                                  "OTEL_SERVICE_NAME": service})
    assert proc.returncode == 0, proc.stderr
    [out] = lines
    assert out["answer"] == ANSWER
    check_calc_trace(stored_tree(collector, out["trace_id"]))
    traces = collector.rows("SELECT uniqExact(TraceId) AS n FROM otel_traces WHERE ServiceName = {svc:String}",
                            svc=service)
    assert traces[0]["n"] == 1, "one trace per rollout"
