"""Each LLM-span convention normalizes into the same call: GenAI JSON, flattened GenAI,
OpenInference; tracerl's token ids are read the same way from each."""

import json

import pytest

from tests.transition_builder.trace_kit import TraceKit, ids
from tracerl import semconv
from tracerl.transition_builder.conventions import convention_of, normalize
from tracerl.transition_builder.spans import Span

QUESTION, ANSWER = "What is two plus two?", "4."
EXPECTED_INPUT = [{"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
                  {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
EXPECTED_OUTPUT_TEXT = ANSWER

GENAI = {
    semconv.GEN_AI_OPERATION_NAME: "chat",
    semconv.GEN_AI_SYSTEM_INSTRUCTIONS: json.dumps([{"type": "text", "content": "Be brief."}]),
    semconv.GEN_AI_INPUT_MESSAGES: json.dumps([{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]),
    semconv.GEN_AI_OUTPUT_MESSAGES: json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}]),
}
FLATTENED = {
    "llm.request.type": "chat", "gen_ai.system": "openai", semconv.GEN_AI_REQUEST_MODEL: "policy",
    "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "Be brief.",
    "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": QUESTION,
    "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": ANSWER,
    "gen_ai.completion.0.finish_reason": "stop",
}
OPENINFERENCE = {
    "openinference.span.kind": "LLM", "llm.model_name": "policy",
    "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "Be brief.",
    "llm.input_messages.1.message.role": "user",
    "llm.input_messages.1.message.contents.0.message_content.type": "text",
    "llm.input_messages.1.message.contents.0.message_content.text": QUESTION,
    "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": ANSWER,
}
CONVENTIONS = {"genai": GENAI, "genai_flattened": FLATTENED, "openinference": OPENINFERENCE}


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_each_convention_normalizes_to_the_same_messages(name):
    span = Span("t", "s", "", "llm", 0, 1, attrs=dict(CONVENTIONS[name]))
    assert convention_of(span) == name
    call = normalize(span, name)
    assert call.input_messages == EXPECTED_INPUT
    assert call.response_text == EXPECTED_OUTPUT_TEXT


def test_flattened_and_openinference_tool_calls_become_tool_call_parts():
    flat = normalize(Span("t", "s", "", "llm", 0, 1, attrs={
        "llm.request.type": "chat", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "add",
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.tool_calls.0.id": "c1",
        "gen_ai.completion.0.tool_calls.0.name": "add", "gen_ai.completion.0.tool_calls.0.arguments": '{"a": 1}'}),
        "genai_flattened")
    assert flat.output_messages[0]["parts"] == [{"type": "tool_call", "id": "c1", "name": "add", "arguments": {"a": 1}}]
    oi = normalize(Span("t", "s", "", "llm", 0, 1, attrs={
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "tool", "llm.input_messages.0.message.tool_call_id": "c1",
        "llm.input_messages.0.message.content": "2",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "add",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"a": 1}'}), "openinference")
    assert oi.input_messages == [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "2"}]}]
    assert oi.output_messages[0]["parts"][0]["name"] == "add"


def test_spans_that_are_no_llm_call_are_not_read_as_one():
    for attrs in ({semconv.GEN_AI_OPERATION_NAME: "invoke_agent"}, {"openinference.span.kind": "TOOL"}, {}):
        assert convention_of(Span("t", "s", "", "x", 0, 1, attrs=attrs)) is None


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_each_convention_with_token_ids_builds_from_the_store(store, build, name):
    t = TraceKit()
    root = t.rollout(f"conv-{name}", 0, 100)
    solver = t.agent("solver", root, 1, 99)
    t.span("llm call", solver, 10, 20, {**CONVENTIONS[name], semconv.LLM_PROMPT_TOKEN_IDS: ids([5, 6, 7]),
                                        semconv.LLM_RESPONSE_TOKEN_IDS: ids([8, 9]),
                                        semconv.LLM_RESPONSE_LOGPROBS: ids([-0.5, -0.25])}, kind="Client")
    t.reward(0.5, root, at=50)
    t.insert(store)
    [tr], _ = build(t.trace_id)
    assert (tr.agent, tr.prompt_ids, tr.response_ids, tr.logprobs, tr.flags) == (
        "solver", [5, 6, 7], [8, 9], [-0.5, -0.25], [])


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_each_convention_without_token_ids_retokenizes_the_same_messages(store, build, tokenizer_dir,
                                                                          hf_tokenizer, name):
    t = TraceKit()
    root = t.rollout(f"conv-retok-{name}", 0, 100)
    t.span("llm call", root, 10, 20, CONVENTIONS[name], kind="Client")
    t.reward(1.0, root, at=50)
    t.insert(store)
    [tr], _ = build(t.trace_id, tokenizer=tokenizer_dir)
    expected_prompt = hf_tokenizer.apply_chat_template(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}],
        add_generation_prompt=True, tokenize=True)["input_ids"]
    assert tr.prompt_ids == expected_prompt
    assert tr.response_ids == hf_tokenizer.encode(ANSWER, add_special_tokens=False)
    assert tr.response_mask == [1] * len(tr.response_ids)
    assert tr.logprobs == []
    assert tr.flags == ["no_logprobs", "retokenized"]
