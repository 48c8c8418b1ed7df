"""The gateway's spans are the OpenAI-client instrumentation's spans: the same calls made once by
an instrumented client and once by a plain client through the gateway give LLM spans with the
same names, kinds and attributes (all but the server-made response ids), and the transition
builder makes the same transitions of both rollouts."""

from __future__ import annotations

import openai
import pytest
from opentelemetry import context as otel_context
from opentelemetry.instrumentation.utils import _SUPPRESS_INSTRUMENTATION_KEY

import tracerl
from tests.fake_openai_server import Reply
from tests.gateway.gateway_proc import trace_spans
from tests.otel_session import traced  # noqa: F401  (fixture)
from tracerl import config, semconv

MESSAGES = [{"role": "system", "content": "You add numbers."}, {"role": "user", "content": "What is 2 + 2?"}]
TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]


def calls(c: openai.OpenAI) -> None:
    """One of each kind of call (chat with and without tools, streamed or not; completions;
    responses), answered by `replies` in order."""
    c.chat.completions.create(model="policy", messages=MESSAGES, temperature=0.7, top_p=0.9, max_tokens=32,
                              seed=3, stop=["\n"], tools=TOOLS)
    c.chat.completions.create(model="policy", messages=MESSAGES, tools=TOOLS)
    list(c.chat.completions.create(model="policy", messages=MESSAGES, stream=True,
                                   stream_options={"include_usage": True}))
    list(c.chat.completions.create(model="policy", messages=MESSAGES, stream=True, tools=TOOLS))
    c.completions.create(model="policy", prompt="2 + 2 =", max_tokens=4, temperature=0)
    list(c.completions.create(model="policy", prompt="2 + 2 =", stream=True))
    c.responses.create(model="policy", input="What is 2 + 2?", instructions="Be brief.")
    list(c.responses.create(model="policy", input=[{"role": "user", "content": "2 + 2?"}], stream=True))


def replies() -> list[Reply]:
    return [Reply("The answer is 4"), Reply("Adding.", tool_calls=[("add", {"a": 2, "b": 2})]), Reply("one two three"),
            Reply("Adding again.", tool_calls=[("add", {"a": 1, "b": 3})]), Reply("4"), Reply("four and more"),
            Reply("It is 4"), Reply("It is four")]


@pytest.fixture
def instrumented():
    """Let tracerl's OpenAI instrumentor (activated by `traced`) record this test's direct calls."""
    config.set_capture_tokens(True)
    token = otel_context.attach(otel_context.set_value(_SUPPRESS_INSTRUMENTATION_KEY, False))
    yield
    otel_context.detach(token)
    config.set_capture_tokens(None)


def comparable(span: dict) -> tuple:
    attrs = {k: v for k, v in span["SpanAttributes"].items() if k != semconv.GEN_AI_RESPONSE_ID}
    return span["SpanName"], span["SpanKind"], span["StatusCode"], attrs


def test_same_calls_same_spans_same_transitions(traced, instrumented, gateway, upstream, collector,  # noqa: F811
                                                 store, build):
    task = {"question": "2 + 2?"}
    upstream.script(*replies())
    with tracerl.rollout(task_id="shape", task=task, group_id="shape-group", attempt=1) as direct:
        calls(openai.OpenAI(base_url=upstream.base_url, api_key="sk", max_retries=0))
        tracerl.emit_reward(1.0, correct=1.0)
    traced.flush()

    upstream.script(*replies())
    ro = gateway.open_rollout(task_id="shape", task=task, group_id="shape-group", attempt=1)
    token = otel_context.attach(otel_context.set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
    try:  # the agent behind the gateway is not instrumented
        calls(openai.OpenAI(base_url=ro["base_url"], api_key="sk", max_retries=0))
    finally:
        otel_context.detach(token)
    gateway.end_rollout(ro["key"], reward=1.0, components={"correct": 1.0})

    client_spans, gateway_spans = trace_spans(collector, direct.trace_id), trace_spans(collector, ro["trace_id"])
    client_llm = [s for s in client_spans if s["SpanKind"] == "Client"]
    gateway_llm = [s for s in gateway_spans if s["SpanKind"] == "Client"]
    assert len(client_llm) == len(gateway_llm) == 8
    assert {s["ScopeName"] for s in client_llm} == {semconv.SCOPE_OPENAI}
    assert {s["ScopeName"] for s in gateway_llm} == {semconv.SCOPE_GATEWAY}
    for mine, theirs in zip(gateway_llm, client_llm):
        assert comparable(mine) == comparable(theirs)
        assert semconv.LLM_RESPONSE_TOKEN_IDS in mine["SpanAttributes"]
    [client_root] = [s for s in client_spans if s["SpanName"] == semconv.SPAN_ROLLOUT]
    [gateway_root] = [s for s in gateway_spans if s["SpanName"] == semconv.SPAN_ROLLOUT]
    assert gateway_root["SpanAttributes"] == client_root["SpanAttributes"]
    reward = [[s["SpanAttributes"] for s in spans if s["SpanName"] == semconv.SPAN_REWARD]
              for spans in (client_spans, gateway_spans)]
    assert reward[0] == reward[1]

    transitions, report = build(direct.trace_id, ro["trace_id"])
    assert report.built == 2, report.summary()
    by_trace = {t: [x for x in transitions if x.trace_id == t] for t in (direct.trace_id, ro["trace_id"])}
    differ = {"trace_id", "span_ids", "built_at"}
    made = [[{k: v for k, v in t.as_dict().items() if k not in differ} for t in ts] for ts in by_trace.values()]
    assert made[0] and made[0] == made[1]
    assert {t["reward"] for t in made[1]} == {1.0} and {t["task_id"] for t in made[1]} == {"shape"}
