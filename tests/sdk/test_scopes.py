"""rollout / agent / emit_reward / emit_variable as spans in the store."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

import tracerl
from tracerl import semconv


def test_rollout_decorator_takes_the_call_arguments_as_task(traced):
    seen = {}

    @tracerl.rollout(group_id="g1", attempt=2, mode="val")
    def solve(question, hint=None):
        seen["trace_id"] = tracerl.scopes.trace.get_current_span().get_span_context().trace_id
        tracerl.emit_reward(0.25, name="partial")
        tracerl.emit_reward(1, correct=1, length=-0.1)
        return "done"

    question = f"q-{uuid.uuid4().hex}"
    assert solve(question, hint="think") == "done"
    spans = traced.spans(format(seen["trace_id"], "032x"))
    [root] = [s for s in spans if s["SpanName"] == semconv.SPAN_ROLLOUT]
    a = root["SpanAttributes"]
    assert json.loads(a[semconv.ROLLOUT_TASK]) == {"question": question, "hint": "think"}
    assert len(a[semconv.ROLLOUT_TASK_ID]) == 16  # derived from the task
    assert a[semconv.ROLLOUT_GROUP_ID] == "g1" and a[semconv.ROLLOUT_ATTEMPT] == "2"
    assert a[semconv.ROLLOUT_MODE] == "val"
    rewards = [s["SpanAttributes"] for s in spans if s["SpanName"] == semconv.SPAN_REWARD]
    assert [(r[semconv.REWARD_NAME], float(r[semconv.REWARD_VALUE])) for r in rewards] == [("partial", 0.25), ("reward", 1.0)]
    assert float(rewards[1][semconv.reward_component("length")]) == -0.1


def test_each_rollout_is_its_own_trace_even_when_nested_in_a_span(traced):
    with tracerl.agent("outer"):
        with tracerl.rollout(task_id="a") as first:
            pass
        with tracerl.rollout(task_id="b") as second:
            pass
    assert first.trace_id != second.trace_id
    assert traced.spans(first.trace_id)[0]["ParentSpanId"] == ""


def test_async_decorator_and_error_status(traced):
    captured = {}

    @tracerl.rollout(task_id="async-task")
    async def run():
        captured["tid"] = format(tracerl.scopes.trace.get_current_span().get_span_context().trace_id, "032x")
        raise ValueError("tool failed")

    with pytest.raises(ValueError):
        asyncio.run(run())
    [root] = traced.spans(captured["tid"])
    assert root["StatusCode"] == "Error" and "tool failed" in root["StatusMessage"]
    assert "exception" in root["event_names"]


def test_variables_are_json_and_capped(traced):
    with tracerl.rollout(task_id="vars") as r:
        tracerl.emit_variable("plan", {"steps": [1, 2, 3]})
        tracerl.emit_variable("big", "x" * 100_000)
    [root] = traced.spans(r.trace_id)
    values = {a[semconv.VARIABLE_NAME]: a[semconv.VARIABLE_VALUE] for a in root["event_attributes"]}
    assert json.loads(values["plan"]) == {"steps": [1, 2, 3]}
    assert len(values["big"]) <= tracerl.scopes.VARIABLE_MAX_CHARS and values["big"].endswith("[truncated]")


def test_bad_input_gets_a_clear_error():
    with pytest.raises(ValueError, match="mode"):
        tracerl.rollout(task_id="x", mode="training")
    with pytest.raises(TypeError, match="number"):
        tracerl.emit_reward("high")


def test_init_is_idempotent_in_a_configured_process(traced):
    from opentelemetry import trace

    from tracerl import config

    provider = trace.get_tracer_provider()
    try:
        assert tracerl.init() is provider and tracerl.init(capture_tokens=True) is provider
        assert config.capture_tokens() is True  # the one setting init still changes
    finally:
        config.set_capture_tokens(None)
