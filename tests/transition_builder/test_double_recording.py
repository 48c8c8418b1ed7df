"""A framework span and the client span of one model call make one transition (tracerl.semconv)."""

import json

from tests.transition_builder.trace_kit import TraceKit
from tracerl import semconv

FRAMEWORK_LLM = {"openinference.span.kind": "LLM", "llm.model_name": "policy",
                 "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "hi"}


def test_client_span_under_the_framework_span_is_kept(store, build):
    t = TraceKit()
    root = t.rollout("double-nested", 0, 100)
    agent = t.agent("writer", root, 1, 99)
    framework = t.span("ChatOpenAI", agent, 10, 40, {**FRAMEWORK_LLM, semconv.GEN_AI_RESPONSE_ID: "r-1"})
    client = t.llm(framework, 12, 38, prompt_ids=[1, 2], response_ids=[3], logprobs=[-0.3], response_id="r-1")
    t.reward(1.0, root, at=60)
    t.insert(store)
    [tr], report = build(t.trace_id)
    assert tr.span_ids == [client] and tr.agent == "writer"
    assert report.double_recorded == 1


def test_same_response_id_on_sibling_spans_keeps_the_one_with_token_ids(store, build):
    t = TraceKit()
    root = t.rollout("double-siblings", 0, 100)
    agent = t.agent("writer", root, 1, 99)
    t.span("framework llm", agent, 10, 40, {**FRAMEWORK_LLM, semconv.GEN_AI_RESPONSE_ID: "r-2"})
    client = t.llm(agent, 11, 39, prompt_ids=[1, 2], response_ids=[3], logprobs=[-0.3], response_id="r-2")
    t.llm(agent, 50, 60, prompt_ids=[4], response_ids=[5], logprobs=[-0.1], response_id="r-3")
    t.reward(1.0, root, at=70)
    t.insert(store)
    transitions, report = build(t.trace_id)
    assert [tr.span_ids for tr in transitions][0] == [client]
    assert [tr.prompt_ids for tr in transitions] == [[1, 2], [4]]
    assert report.double_recorded == 1


def test_client_span_without_messages_borrows_the_framework_messages(store, build, tokenizer_dir, hf_tokenizer):
    t = TraceKit()
    root = t.rollout("double-lend", 0, 100)
    framework = t.span("framework llm", root, 10, 40, {
        semconv.GEN_AI_OPERATION_NAME: "chat",
        semconv.GEN_AI_INPUT_MESSAGES: json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])})
    t.llm(framework, 12, 38, answer="hello")  # the client recorded no input and no token ids
    t.reward(1.0, root, at=60)
    t.insert(store)
    [tr], _ = build(t.trace_id, tokenizer=tokenizer_dir)
    expected = hf_tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True,
                                                tokenize=True)["input_ids"]
    assert tr.prompt_ids == expected
    assert tr.response_ids == hf_tokenizer.encode("hello", add_special_tokens=False)
