"""The OpenAI-client instrumentor against the scripted server, exported to the real collector."""

from __future__ import annotations

import asyncio
import json
import uuid

import openai
import pytest

import tracerl
from tracerl import config, semconv
from tests.fake_openai_server import Reply, logprob, render_chat, token_ids

MESSAGES = [{"role": "system", "content": "You add numbers."}, {"role": "user", "content": "What is 2 + 2?"}]


@pytest.fixture(autouse=True)
def capture_tokens():
    config.set_capture_tokens(True)
    yield
    config.set_capture_tokens(None)


def _client(llm):
    return openai.OpenAI(base_url=llm.base_url, api_key="test-key", max_retries=0)


def _aclient(llm):
    return openai.AsyncOpenAI(base_url=llm.base_url, api_key="test-key", max_retries=0)


def _llm_spans(traced, trace_id):
    return [s for s in traced.spans(trace_id) if s["SpanKind"] == "Client"]


def _rollout():
    return tracerl.rollout(task_id=f"t-{uuid.uuid4().hex[:8]}", task={"q": "2+2"})


def test_chat_completion_records_genai_attributes_and_token_ids(traced, llm):
    llm.script(Reply("The answer is 4"))
    with _rollout() as r:
        resp = _client(llm).chat.completions.create(model="policy", messages=MESSAGES, temperature=0.7,
                                                    top_p=0.9, max_tokens=32, seed=3, stop=["\n"])
    assert resp.choices[0].message.content == "The answer is 4"
    sent = llm.requests[-1].body
    assert sent["return_token_ids"] is True and sent["logprobs"] is True

    [span] = _llm_spans(traced, r.trace_id)
    a = span["SpanAttributes"]
    assert span["SpanName"] == "chat policy"
    assert a[semconv.GEN_AI_OPERATION_NAME] == "chat"
    assert a[semconv.GEN_AI_REQUEST_MODEL] == "policy"
    assert a[semconv.GEN_AI_REQUEST_TEMPERATURE] == "0.7"
    assert a[semconv.GEN_AI_REQUEST_TOP_P] == "0.9"
    assert a[semconv.GEN_AI_REQUEST_MAX_TOKENS] == "32"
    assert a[semconv.GEN_AI_REQUEST_SEED] == "3"
    assert json.loads(a[semconv.GEN_AI_REQUEST_STOP_SEQUENCES]) == ["\n"]
    assert a[semconv.GEN_AI_RESPONSE_ID] == resp.id
    assert json.loads(a[semconv.GEN_AI_RESPONSE_FINISH_REASONS]) == ["stop"]
    assert a[semconv.GEN_AI_USAGE_INPUT_TOKENS] == str(resp.usage.prompt_tokens)
    assert a[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] == str(resp.usage.completion_tokens)
    assert json.loads(a[semconv.GEN_AI_INPUT_MESSAGES]) == [
        {"role": "system", "parts": [{"type": "text", "content": "You add numbers."}]},
        {"role": "user", "parts": [{"type": "text", "content": "What is 2 + 2?"}]}]
    assert json.loads(a[semconv.GEN_AI_OUTPUT_MESSAGES]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "The answer is 4"}], "finish_reason": "stop"}]
    assert json.loads(a[semconv.LLM_PROMPT_TOKEN_IDS]) == token_ids(render_chat(MESSAGES))
    assert json.loads(a[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("The answer is 4")
    assert json.loads(a[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(i) for i in range(4)]


def test_tool_calls_in_output_messages(traced, llm):
    llm.script(Reply("", tool_calls=[("add", {"a": 2, "b": 2})]))
    with _rollout() as r:
        _client(llm).chat.completions.create(model="policy", messages=MESSAGES,
                                             tools=[{"type": "function", "function": {"name": "add"}}])
    [span] = _llm_spans(traced, r.trace_id)
    out = json.loads(span["SpanAttributes"][semconv.GEN_AI_OUTPUT_MESSAGES])
    assert out[0]["parts"] == [{"type": "tool_call", "id": "call_0", "name": "add", "arguments": {"a": 2, "b": 2}}]
    assert out[0]["finish_reason"] == "tool_calls"


def test_capture_off_sends_nothing_extra(traced, llm):
    config.set_capture_tokens(False)
    with _rollout() as r:
        _client(llm).chat.completions.create(model="policy", messages=MESSAGES)
    assert "return_token_ids" not in llm.requests[-1].body and "logprobs" not in llm.requests[-1].body
    [span] = _llm_spans(traced, r.trace_id)
    assert semconv.LLM_PROMPT_TOKEN_IDS not in span["SpanAttributes"]
    assert semconv.GEN_AI_OUTPUT_MESSAGES in span["SpanAttributes"]


def test_sync_stream_accumulates_text_token_ids_and_logprobs(traced, llm):
    llm.script(Reply("one two three four"))
    with _rollout() as r:
        stream = _client(llm).chat.completions.create(model="policy", messages=MESSAGES, stream=True,
                                                      stream_options={"include_usage": True})
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "one two three four"
    [span] = _llm_spans(traced, r.trace_id)
    a = span["SpanAttributes"]
    assert a[semconv.GEN_AI_REQUEST_STREAM] == "true"
    assert json.loads(a[semconv.GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == [{"type": "text", "content": text}]
    assert json.loads(a[semconv.LLM_PROMPT_TOKEN_IDS]) == token_ids(render_chat(MESSAGES))
    assert json.loads(a[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids(text)
    assert json.loads(a[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(i) for i in range(4)]
    assert a[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] == "4"


def test_sync_stream_closed_early_ends_span_with_partial_output(traced, llm):
    llm.script(Reply("alpha beta gamma delta"))
    with _rollout() as r:
        with _client(llm).chat.completions.create(model="policy", messages=MESSAGES, stream=True) as stream:
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content == "alpha ":
                    break
    [span] = _llm_spans(traced, r.trace_id)
    assert json.loads(span["SpanAttributes"][semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("alpha ")


def test_async_stream_and_tool_call_deltas(traced, llm):
    llm.script(Reply("sum", tool_calls=[("add", {"a": 1, "b": 41})]))

    async def run():
        with _rollout() as r:
            stream = await _aclient(llm).chat.completions.create(model="policy", messages=MESSAGES, stream=True)
            async for _ in stream:
                pass
        return r.trace_id

    trace_id = asyncio.run(run())
    [span] = _llm_spans(traced, trace_id)
    a = span["SpanAttributes"]
    parts = json.loads(a[semconv.GEN_AI_OUTPUT_MESSAGES])[0]["parts"]
    assert parts == [{"type": "text", "content": "sum"},
                     {"type": "tool_call", "id": "call_0", "name": "add", "arguments": {"a": 1, "b": 41}}]
    assert json.loads(a[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("sum")
    assert json.loads(a[semconv.GEN_AI_RESPONSE_FINISH_REASONS]) == ["tool_calls"]


def test_async_non_stream_completions_and_responses(traced, llm):
    async def run():
        client = _aclient(llm)
        with _rollout() as r:
            await client.completions.create(model="policy", prompt="2 + 2 =")
            await client.responses.create(model="policy", input="What is 2 + 2?", instructions="Be brief.",
                                          top_logprobs=1)
        return r.trace_id

    llm.script(Reply(" 4"), Reply("It is 4"))
    spans = _llm_spans(traced, asyncio.run(run()))
    by_op = {s["SpanAttributes"][semconv.GEN_AI_OPERATION_NAME]: s["SpanAttributes"] for s in spans}
    comp, resp = by_op["text_completion"], by_op["chat"]
    assert json.loads(comp[semconv.LLM_PROMPT_TOKEN_IDS]) == token_ids("2 + 2 =")
    assert json.loads(comp[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids(" 4")
    assert json.loads(comp[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(0)]
    assert json.loads(resp[semconv.GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "Be brief."}]
    assert json.loads(resp[semconv.GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == [{"type": "text", "content": "It is 4"}]
    assert json.loads(resp[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(i) for i in range(3)]
    assert json.loads(resp[semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids("It is 4")


def test_streams_of_completions_and_responses(traced, llm):
    llm.script(Reply(" four"), Reply("It is four"))
    client = _client(llm)
    with _rollout() as r:
        list(client.completions.create(model="policy", prompt="2 + 2 =", stream=True))
        list(client.responses.create(model="policy", input="What is 2 + 2?", stream=True, top_logprobs=1))
    spans = _llm_spans(traced, r.trace_id)
    by_op = {s["SpanAttributes"][semconv.GEN_AI_OPERATION_NAME]: s["SpanAttributes"] for s in spans}
    assert json.loads(by_op["text_completion"][semconv.LLM_RESPONSE_TOKEN_IDS]) == token_ids(" four")
    assert json.loads(by_op["text_completion"][semconv.LLM_PROMPT_TOKEN_IDS]) == token_ids("2 + 2 =")
    resp = by_op["chat"]
    assert json.loads(resp[semconv.GEN_AI_OUTPUT_MESSAGES])[0]["parts"] == [{"type": "text", "content": "It is four"}]
    assert json.loads(resp[semconv.LLM_RESPONSE_LOGPROBS]) == [logprob(i) for i in range(3)]


def test_error_is_recorded_and_reraised_unchanged(traced, llm):
    llm.script(Reply(status=400, error="context length exceeded"))
    with _rollout() as r:
        with pytest.raises(openai.BadRequestError) as info:
            _client(llm).chat.completions.create(model="policy", messages=MESSAGES)
    assert "context length exceeded" in str(info.value)
    [span] = _llm_spans(traced, r.trace_id)
    assert span["StatusCode"] == "Error"
    assert "context length exceeded" in span["StatusMessage"]
    assert span["SpanAttributes"][semconv.ERROR_TYPE] == "BadRequestError"
    assert "exception" in span["event_names"]


def test_async_error_is_recorded_and_reraised(traced, llm):
    llm.script(Reply(status=500, error="engine died"))

    async def run():
        with _rollout() as r:
            with pytest.raises(openai.InternalServerError):
                await _aclient(llm).chat.completions.create(model="policy", messages=MESSAGES)
        return r.trace_id

    [span] = _llm_spans(traced, asyncio.run(run()))
    assert span["StatusCode"] == "Error" and span["SpanAttributes"][semconv.ERROR_TYPE] == "InternalServerError"


def test_instrumentation_bug_never_breaks_the_call(traced, llm, monkeypatch):
    from tracerl.instrumentations.openai import wrappers

    def broken(*args, **kwargs):
        raise RuntimeError("bug in tracerl")

    monkeypatch.setattr(wrappers, "request_attributes", broken)
    monkeypatch.setattr(wrappers, "OUTCOME", {})  # response side broken too
    resp = _client(llm).chat.completions.create(model="policy", messages=MESSAGES)
    assert resp.choices[0].message.content == "ok"
    monkeypatch.undo()
    monkeypatch.setattr(wrappers, "OUTCOME", {})
    with _rollout() as r:
        resp = _client(llm).chat.completions.create(model="policy", messages=MESSAGES)
    assert resp.choices[0].message.content == "ok"
    [span] = _llm_spans(traced, r.trace_id)  # the span still ends, just without response attributes
    assert semconv.GEN_AI_RESPONSE_ID not in span["SpanAttributes"]


def test_raw_response_wrapper_still_works(traced, llm):
    with _rollout() as r:
        raw = _client(llm).chat.completions.with_raw_response.create(model="policy", messages=MESSAGES)
        assert raw.parse().choices[0].message.content == "ok"
    assert len(_llm_spans(traced, r.trace_id)) == 1


def test_llm_spans_nest_under_agent_scope(traced, llm):
    with _rollout() as r:
        with tracerl.agent("writer"):
            _client(llm).chat.completions.create(model="policy", messages=MESSAGES)
    spans = traced.spans(r.trace_id)
    agent = next(s for s in spans if s["SpanName"] == "invoke_agent writer")
    assert agent["SpanAttributes"][semconv.GEN_AI_AGENT_NAME] == "writer"
    [llm_span] = [s for s in spans if s["SpanKind"] == "Client"]
    assert llm_span["ParentSpanId"] == agent["SpanId"]
