"""A plain openai agent, run as its own process, traced into the real collector.

Once under ``opentelemetry-instrument`` (nothing tracerl-specific in the launch but the
environment) and once calling ``tracerl.init()``. SQL over ``otel_traces`` must then find one
trace per rollout holding the rollout root, the agent scope, both LLM calls with their token ids
and logprobs, the reward span and the semantic variable.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tracerl import semconv
from tests.fake_openai_server import Reply, logprob, render_chat, token_ids
from tests.sdk.agent_runner import run_agent

SQL = ("SELECT TraceId, SpanName, SpanKind, SpanId, ParentSpanId, SpanAttributes, ResourceAttributes,"
       " `Events.Name` AS event_names, `Events.Attributes` AS event_attributes"
       " FROM otel_traces WHERE ServiceName = {svc:String} ORDER BY Timestamp")


@pytest.mark.parametrize("launch", ["opentelemetry-instrument", "tracerl.init"])
def test_agent_rollouts_land_as_one_trace_each(collector, llm, launch):
    service = f"e2e-{launch}-{uuid.uuid4().hex[:6]}"
    tasks = [{"id": "add-1", "question": "2 + 2?", "expected": "4"},
             {"id": "add-2", "question": "3 + 3?", "expected": "6"}]
    llm.script(Reply("4"), Reply("4"), Reply("5"), Reply("7"))  # task 1 right, task 2 wrong
    printed, proc = run_agent(base_url=llm.base_url, endpoint=collector.grpc_endpoint,
                              instrument=launch == "opentelemetry-instrument",
                              env={"OTEL_SERVICE_NAME": service, "AGENT_TASKS": json.dumps(tasks),
                                   "TRACERL_CAPTURE_TOKENS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert [p["task"] for p in printed] == ["add-1", "add-2"]

    rows = collector.rows(SQL, svc=service)
    assert {r["TraceId"] for r in rows} == {p["trace_id"] for p in printed}, "one trace per rollout"
    for line, expected_reward, answers in zip(printed, [1.0, 0.0], [("4", "4"), ("5", "7")]):
        spans = [r for r in rows if r["TraceId"] == line["trace_id"]]
        [root] = [s for s in spans if s["SpanName"] == semconv.SPAN_ROLLOUT]
        assert root["ParentSpanId"] == ""
        assert root["SpanAttributes"][semconv.ROLLOUT_TASK_ID] == line["task"]
        assert root["SpanAttributes"][semconv.ROLLOUT_GROUP_ID] == line["task"]
        assert root["SpanAttributes"][semconv.ROLLOUT_MODE] == "train"
        assert json.loads(root["SpanAttributes"][semconv.ROLLOUT_TASK])["question"].endswith("?")

        [agent] = [s for s in spans if s["SpanName"] == "invoke_agent solver"]
        assert agent["ParentSpanId"] == root["SpanId"]
        calls = [s for s in spans if s["SpanKind"] == "Client"]
        assert len(calls) == 2 and all(c["ParentSpanId"] == agent["SpanId"] for c in calls)
        first, second = (c["SpanAttributes"] for c in calls)
        question = json.loads(first[semconv.GEN_AI_INPUT_MESSAGES])[0]["parts"][0]["content"]
        assert json.loads(first[semconv.LLM_PROMPT_TOKEN_IDS]) == token_ids(render_chat([{"role": "user", "content": question}]))
        assert json.loads(first[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids(answers[0])
        assert json.loads(second[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids(answers[1])
        assert json.loads(second[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(0)]
        assert len(json.loads(second[semconv.GEN_AI_INPUT_MESSAGES])) == 3

        # the semantic variable is an event on the span current when it was emitted (the agent's)
        assert agent["event_names"] == [semconv.EVENT_VARIABLE]
        variable = agent["event_attributes"][0]
        assert variable[semconv.VARIABLE_NAME] == "answer"
        assert json.loads(variable[semconv.VARIABLE_VALUE]) == {"text": answers[0]}

        [reward] = [s for s in spans if s["SpanName"] == semconv.SPAN_REWARD]
        assert reward["ParentSpanId"] == root["SpanId"]
        assert float(reward["SpanAttributes"][semconv.REWARD_VALUE]) == expected_reward
        assert reward["SpanAttributes"][semconv.REWARD_NAME] == "reward"
        assert float(reward["SpanAttributes"][semconv.reward_component("brevity")]) == 0.5

    # the agent's API key appeared in no attribute (the default redaction would mask it anyway)
    assert not any("sk-test" in v for r in rows for v in r["SpanAttributes"].values())
