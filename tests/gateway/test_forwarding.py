"""Plain and streaming calls through `tracerl gateway`: what the agent gets back, what the upstream
is sent, and the spans that land in the store."""

from __future__ import annotations

import json
import threading

import httpx
import openai
import pytest

from tests.fake_openai_server import Reply, logprob, render_chat, token_ids
from tests.gateway.gateway_proc import llm_spans, trace_spans
from tracerl import semconv

MESSAGES = [{"role": "system", "content": "You add numbers."}, {"role": "user", "content": "What is 2 + 2?"}]


def client(base_url: str, **kwargs) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="sk-agent-key", max_retries=0, **kwargs)


def one_call_rollout(gateway, collector, call):
    """Run ``call(openai_client)`` in a registered rollout; returns (result, root span, LLM span)."""
    ro = gateway.open_rollout(task_id="fwd")
    result = call(client(ro["base_url"]))
    gateway.end_rollout(ro["key"])
    spans = trace_spans(collector, ro["trace_id"])
    [root] = [s for s in spans if s["SpanName"] == semconv.SPAN_ROLLOUT]
    [llm] = [s for s in spans if s["SpanKind"] == "Client"]
    return result, root, llm


def test_chat_call_is_forwarded_and_recorded_with_token_ids(gateway, upstream, collector):
    upstream.script(Reply("The answer is 4"))
    resp, root, span = one_call_rollout(gateway, collector, lambda c: c.chat.completions.create(
        model="policy", messages=MESSAGES, temperature=0.7, top_p=0.9, max_tokens=32, seed=3, stop=["\n"]))

    # the agent gets a plain OpenAI response: nothing of what only the gateway asked for
    assert resp.choices[0].message.content == "The answer is 4"
    assert resp.choices[0].logprobs is None
    assert "prompt_token_ids" not in (resp.model_extra or {})
    assert "token_ids" not in (resp.choices[0].model_extra or {})
    sent = upstream.requests[-1]
    assert sent.body["return_token_ids"] is True and sent.body["logprobs"] is True
    assert sent.body["messages"] == MESSAGES and sent.body["temperature"] == 0.7
    assert sent.headers["Authorization"] == "Bearer sk-agent-key"  # the agent's key goes through
    assert not {h.lower() for h in sent.headers} & {semconv.HEADER_ROLLOUT, "traceparent"}

    a = span["SpanAttributes"]
    assert span["SpanName"] == "chat policy" and span["StatusCode"] == "Unset"
    assert span["ScopeName"] == semconv.SCOPE_GATEWAY and span["ServiceName"] == "tracerl-gateway"
    assert span["ParentSpanId"] == root["SpanId"]
    assert a[semconv.GEN_AI_OPERATION_NAME] == "chat" and a[semconv.GEN_AI_PROVIDER_NAME] == "openai"
    assert a[semconv.GEN_AI_REQUEST_MODEL] == "policy"
    assert (a[semconv.GEN_AI_REQUEST_TEMPERATURE], a[semconv.GEN_AI_REQUEST_TOP_P]) == ("0.7", "0.9")
    assert (a[semconv.GEN_AI_REQUEST_MAX_TOKENS], a[semconv.GEN_AI_REQUEST_SEED]) == ("32", "3")
    assert json.loads(a[semconv.GEN_AI_REQUEST_STOP_SEQUENCES]) == ["\n"]
    assert a[semconv.GEN_AI_RESPONSE_ID] == resp.id
    assert json.loads(a[semconv.GEN_AI_RESPONSE_FINISH_REASONS]) == ["stop"]
    assert a[semconv.GEN_AI_USAGE_INPUT_TOKENS] == str(resp.usage.prompt_tokens)
    assert a[semconv.SERVER_ADDRESS] == "127.0.0.1" and a[semconv.SERVER_PORT] == str(upstream.port)
    assert json.loads(a[semconv.GEN_AI_INPUT_MESSAGES])[1] == {
        "role": "user", "parts": [{"type": "text", "content": "What is 2 + 2?"}]}
    assert json.loads(a[semconv.GEN_AI_OUTPUT_MESSAGES]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "The answer is 4"}], "finish_reason": "stop"}]
    assert json.loads(a[semconv.LLM_PROMPT_TOKEN_IDS]) == token_ids(render_chat(MESSAGES))
    assert json.loads(a[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("The answer is 4")
    assert json.loads(a[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(i) for i in range(4)]


def test_streamed_chat_is_passed_through_and_accumulated(gateway, upstream, collector):
    upstream.script(Reply("one two three four"))

    def call(c):
        stream = c.chat.completions.create(model="policy", messages=MESSAGES, stream=True,
                                           stream_options={"include_usage": True})
        return list(stream)

    chunks, _, span = one_call_rollout(gateway, collector, call)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "one two three four"
    assert chunks[-1].usage.completion_tokens == 4
    for chunk in chunks:  # token ids and logprobs were the gateway's idea: hidden from the agent
        assert "prompt_token_ids" not in (chunk.model_extra or {})
        for choice in chunk.choices:
            assert choice.logprobs is None and "token_ids" not in (choice.model_extra or {})
    a = span["SpanAttributes"]
    assert a[semconv.GEN_AI_REQUEST_STREAM] == "true"
    assert json.loads(a[semconv.GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == [
        {"type": "text", "content": "one two three four"}]
    assert json.loads(a[semconv.LLM_PROMPT_TOKEN_IDS]) == token_ids(render_chat(MESSAGES))
    assert json.loads(a[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("one two three four")
    assert json.loads(a[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(i) for i in range(4)]
    assert a[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] == "4"


def test_tool_calls_streamed_and_not(gateway, upstream, collector):
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    want = [{"type": "tool_call", "id": "call_0", "name": "add", "arguments": {"a": 2, "b": 2}}]
    for stream in (False, True):
        upstream.script(Reply("", tool_calls=[("add", {"a": 2, "b": 2})]))
        _, _, span = one_call_rollout(gateway, collector, lambda c: list(c.chat.completions.create(
            model="policy", messages=MESSAGES, tools=tools, stream=True)) if stream else
            c.chat.completions.create(model="policy", messages=MESSAGES, tools=tools))
        out = json.loads(span["SpanAttributes"][semconv.GEN_AI_OUTPUT_MESSAGES])
        assert out[0]["parts"] == want and out[0]["finish_reason"] == "tool_calls"


def test_completions_plain_and_streamed(gateway, upstream, collector):
    upstream.script(Reply("4"), Reply("four and more"))
    resp, _, span = one_call_rollout(gateway, collector, lambda c: c.completions.create(
        model="policy", prompt="2 + 2 =", max_tokens=4))
    assert resp.choices[0].text == "4" and resp.choices[0].logprobs is None
    assert upstream.requests[-1].body["logprobs"] == 1
    a = span["SpanAttributes"]
    assert span["SpanName"] == "text_completion policy"
    assert json.loads(a[semconv.LLM_PROMPT_TOKEN_IDS]) == token_ids("2 + 2 =")
    assert json.loads(a[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("4")
    assert json.loads(a[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(0)]

    chunks, _, span = one_call_rollout(gateway, collector, lambda c: list(c.completions.create(
        model="policy", prompt="2 + 2 =", stream=True)))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == "four and more"
    a = span["SpanAttributes"]
    assert json.loads(a[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("four and more")
    assert json.loads(a[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(i) for i in range(3)]


def test_responses_api_plain_and_streamed(gateway, upstream, collector):
    upstream.script(Reply("It is 4"), Reply("It is four"))
    resp, _, span = one_call_rollout(gateway, collector, lambda c: c.responses.create(
        model="policy", input="What is 2 + 2?", instructions="Be brief."))
    assert resp.output_text == "It is 4"
    a = span["SpanAttributes"]
    assert json.loads(a[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("It is 4")
    assert json.loads(a[semconv.GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "Be brief."}]

    events, _, span = one_call_rollout(gateway, collector, lambda c: list(c.responses.create(
        model="policy", input="What is 2 + 2?", stream=True)))
    assert events[-1].type == "response.completed"
    out = json.loads(span["SpanAttributes"][semconv.GEN_AI_OUTPUT_MESSAGES])
    assert out[0]["parts"] == [{"type": "text", "content": "It is four"}]


def test_an_agent_that_asks_for_token_ids_gets_them(gateway, upstream, collector):
    upstream.script(Reply("4"))
    resp, _, span = one_call_rollout(gateway, collector, lambda c: c.chat.completions.create(
        model="policy", messages=MESSAGES, logprobs=True, extra_body={"return_token_ids": True}))
    assert resp.model_extra["prompt_token_ids"] == token_ids(render_chat(MESSAGES))
    assert resp.choices[0].model_extra["token_ids"] == token_ids("4")
    assert resp.choices[0].logprobs.content[0].logprob == logprob(0)
    assert json.loads(span["SpanAttributes"][semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("4")


def test_stream_events_reach_the_agent_while_the_upstream_is_still_generating(gateway, upstream):
    """The upstream sends its first event and then waits for the test: the agent can only read
    that event if the gateway forwards it at once instead of buffering the stream."""
    hold = threading.Event()
    upstream.script(Reply("first second third", hold=hold))
    body = {"model": "policy", "messages": MESSAGES, "stream": True}
    with httpx.Client(timeout=httpx.Timeout(20.0)) as http:
        with http.stream("POST", gateway.base_url + "/chat/completions", json=body) as resp:
            lines = resp.iter_lines()
            first = next(line for line in lines if line.startswith("data:"))
            assert not hold.is_set()  # the upstream is still holding the rest back
            assert json.loads(first[5:])["choices"][0]["delta"]["role"] == "assistant"
            hold.set()
            rest = [json.loads(line[5:]) for line in lines if line.startswith("data:") and "[DONE]" not in line]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in rest) == "first second third"


def test_models_and_other_paths_are_forwarded_unrecorded(gateway, upstream):
    models = client(gateway.base_url).models.list()
    assert [m.id for m in models.data] == [upstream.model]
    r = gateway.http.get("/v1/no-such-thing")
    assert r.status_code == 404  # the upstream's answer, passed through


def test_without_capture_the_request_goes_through_untouched(make_gateway, upstream, collector):
    gw = make_gateway([upstream.base_url])
    upstream.script(Reply("4"))
    ro = gw.open_rollout(task_id="no-capture")
    resp = client(ro["base_url"]).chat.completions.create(model="policy", messages=MESSAGES)
    assert resp.choices[0].message.content == "4"
    assert upstream.requests[-1].body == {"model": "policy", "messages": MESSAGES}
    gw.end_rollout(ro["key"])
    [span] = llm_spans(collector, ro["trace_id"])
    assert semconv.LLM_PROMPT_TOKEN_IDS not in span["SpanAttributes"]
    assert semconv.GEN_AI_OUTPUT_MESSAGES in span["SpanAttributes"]


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/rollout/k1/v1/chat/completions"])
def test_request_body_reaches_the_upstream_byte_for_byte_when_nothing_is_added(make_gateway, upstream, path):
    gw = make_gateway([upstream.base_url])
    raw = b'{"model": "policy",   "messages": [{"role": "user", "content": "hi"}], "x_vendor": [1, 2]}'
    r = gw.http.post(path, content=raw, headers={"Content-Type": "application/json"})
    assert r.status_code == 200
    assert upstream.requests[-1].body == json.loads(raw)
