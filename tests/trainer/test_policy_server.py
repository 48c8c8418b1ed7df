"""The CPU policy server: vLLM's response shape, logprobs that match the model, tools in the
prompt and tool calls out of the text, batching of concurrent requests, in-place reload."""

import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import torch

from tracerl.trainer.policy_server import (Gateway, PolicyModel, PolicyServer, RequestError, parse_sampling,
                                           parse_tool_calls)


def post(url, body, headers=None):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.fixture
def server(toy_model_dir):
    srv = PolicyServer(PolicyModel(toy_model_dir), batch_wait_ms=50).start()
    yield srv
    srv.stop()


def recomputed_logprobs(model: PolicyModel, prompt, response):
    ids = torch.tensor([prompt + response])
    with torch.no_grad():
        logits = model.model(input_ids=ids).logits[0].float()
    logp = torch.log_softmax(logits[len(prompt) - 1:-1], dim=-1)
    return [float(logp[i, t]) for i, t in enumerate(response)]


def test_chat_answers_in_vllm_shape_with_logprobs_of_the_model(server):
    status, reply = post(server.url + "/chat/completions", {
        "model": "any-name-at-all", "messages": [{"role": "user", "content": "say the word red"}],
        "max_tokens": 6, "temperature": 1.0, "seed": 3, "logprobs": True, "return_token_ids": True})
    assert status == 200, reply
    assert reply["object"] == "chat.completion" and reply["model"] == "any-name-at-all"
    tok = server.model.tokenizer
    expected_prompt = tok(tok.apply_chat_template([{"role": "user", "content": "say the word red"}],
                                                  add_generation_prompt=True, tokenize=False),
                          add_special_tokens=False).input_ids
    assert reply["prompt_token_ids"] == expected_prompt
    choice = reply["choices"][0]
    assert 1 <= len(choice["token_ids"]) <= 6
    assert choice["finish_reason"] in ("stop", "length")
    logprobs = [entry["logprob"] for entry in choice["logprobs"]["content"]]
    assert len(logprobs) == len(choice["token_ids"])
    assert logprobs == pytest.approx(recomputed_logprobs(server.model, expected_prompt, choice["token_ids"]), abs=1e-4)
    assert reply["usage"]["completion_tokens"] == len(choice["token_ids"])


def test_completions_shape_and_n(server):
    status, reply = post(server.url + "/completions", {"model": "m", "prompt": "say red", "max_tokens": 3,
                                                      "logprobs": 1, "n": 2})
    assert status == 200, reply
    assert reply["object"] == "text_completion" and len(reply["choices"]) == 2
    for choice in reply["choices"]:
        assert choice["prompt_token_ids"] == server.model.tokenizer("say red").input_ids
        assert len(choice["logprobs"]["token_logprobs"]) == len(choice["token_ids"]) <= 3


def test_seeded_sampling_repeats_and_greedy_is_deterministic(server):
    body = {"messages": [{"role": "user", "content": "yes or no ?"}], "max_tokens": 5}
    a = post(server.url + "/chat/completions", {**body, "seed": 7})[1]["choices"][0]["token_ids"]
    b = post(server.url + "/chat/completions", {**body, "seed": 7})[1]["choices"][0]["token_ids"]
    assert a == b
    g1 = post(server.url + "/chat/completions", {**body, "temperature": 0})[1]["choices"][0]["token_ids"]
    g2 = post(server.url + "/chat/completions", {**body, "temperature": 0})[1]["choices"][0]["token_ids"]
    assert g1 == g2


def test_tools_are_rendered_into_the_prompt(server):
    tools = [{"type": "function", "function": {"name": "tree", "parameters": {"type": "object"}}}]
    with_tools = post(server.url + "/chat/completions", {"messages": [{"role": "user", "content": "call"}],
                                                       "tools": tools, "max_tokens": 1})[1]
    without = post(server.url + "/chat/completions", {"messages": [{"role": "user", "content": "call"}],
                                                    "max_tokens": 1})[1]
    tok = server.model.tokenizer
    assert tok.convert_tokens_to_ids("tree") in with_tools["prompt_token_ids"]
    assert tok.convert_tokens_to_ids("<|system|>") in with_tools["prompt_token_ids"]
    assert tok.convert_tokens_to_ids("tree") not in without["prompt_token_ids"]


def test_tool_calls_are_parsed_out_of_the_text():
    text, calls = parse_tool_calls('let me look <tool_call>{"name": "lookup", "arguments": {"q": "red"}}</tool_call>')
    assert text == "let me look"
    assert calls[0]["function"] == {"name": "lookup", "arguments": '{"q": "red"}'}
    assert calls[0]["type"] == "function" and calls[0]["id"].startswith("call_")
    text, calls = parse_tool_calls("<tool_call>not json</tool_call>")
    assert calls == [] and text == "<tool_call>not json</tool_call>"


def test_a_tool_call_in_the_output_comes_back_as_tool_calls(server, monkeypatch):
    from tracerl.trainer import policy_server as ps

    monkeypatch.setattr(server.model, "decode", lambda ids: '<tool_call>{"name": "tree", "arguments": {}}</tool_call>')
    reply = post(server.url + "/chat/completions", {"messages": [{"role": "user", "content": "call"}],
                                                    "max_tokens": 2})[1]
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"]["name"] == "tree"
    assert choice["message"]["content"] is None
    assert ps.TOOL_CALL.pattern


def test_concurrent_requests_are_batched(server):
    results = []

    def ask(i):
        results.append(post(server.url + "/chat/completions", {
            "messages": [{"role": "user", "content": "say the word " + ["red", "blue", "cat", "sun"][i % 4]}],
            "max_tokens": 4, "seed": i})[1])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and all("choices" in r for r in results)
    assert server.batcher.largest_batch > 1
    assert server.batcher.batches < 8


def test_bad_requests_get_400(server):
    assert post(server.url + "/chat/completions", {"messages": []})[0] == 400
    assert post(server.url + "/chat/completions", {"messages": [{"role": "user", "content": "x"}],
                                                  "max_tokens": "many"})[0] == 400
    assert post(server.url + "/completions", {"prompt": {"not": "text"}})[0] == 400
    with pytest.raises(RequestError):
        parse_sampling({"max_tokens": 0}, 16)


class _FakeGateway(BaseHTTPRequestHandler):
    calls: list = []

    def do_POST(self):
        self.calls.append(self.path)
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def test_reload_in_place_changes_the_logprobs_and_pauses_the_gateway(toy_model_dir, tmp_path):
    from transformers import AutoModelForCausalLM

    gateway = ThreadingHTTPServer(("127.0.0.1", 0), _FakeGateway)
    threading.Thread(target=gateway.serve_forever, daemon=True).start()
    _FakeGateway.calls = []
    srv = PolicyServer(PolicyModel(toy_model_dir), gateway=Gateway(f"http://127.0.0.1:{gateway.server_address[1]}"),
                       admin_token="s3cret").start()
    try:
        body = {"messages": [{"role": "user", "content": "say the word red"}], "max_tokens": 3, "seed": 1,
                "logprobs": True}
        before = post(srv.url + "/chat/completions", body)[1]["choices"][0]
        # A checkpoint with every weight of the embedding scaled: new logprobs for the same tokens.
        changed = AutoModelForCausalLM.from_pretrained(toy_model_dir)
        with torch.no_grad():
            changed.model.embed_tokens.weight.mul_(3.0)
        changed.save_pretrained(tmp_path / "ckpt")
        assert post(srv.url.removesuffix("/v1") + "/admin/reload_weights", {"path": str(tmp_path / "ckpt"),
                                                                           "version": 1})[0] == 401
        status, reply = post(srv.url.removesuffix("/v1") + "/admin/reload_weights",
                             {"path": str(tmp_path / "ckpt"), "version": 1}, {"authorization": "Bearer s3cret"})
        assert (status, reply["version"]) == (200, 1)
        assert _FakeGateway.calls == ["/admin/pause", "/admin/resume"]
        prompt = post(srv.url + "/chat/completions", body)[1]["prompt_token_ids"]
        new = recomputed_logprobs(srv.model, prompt, before["token_ids"])
        old = [e["logprob"] for e in before["logprobs"]["content"]]
        assert max(abs(a - b) for a, b in zip(new, old)) > 1e-3
        # From memory: the trainer's state dict, copied into the served model's tensors.
        state = {k: v.clone() for k, v in changed.state_dict().items()}
        state["model.norm.weight"] = torch.full_like(state["model.norm.weight"], 0.5)
        srv.reload(state_dict=state, version=2)
        assert torch.equal(srv.model.model.model.norm.weight, state["model.norm.weight"])
        assert srv.model.version == 2
        assert _FakeGateway.calls[-2:] == ["/admin/pause", "/admin/resume"]
    finally:
        srv.stop()
        gateway.shutdown()
