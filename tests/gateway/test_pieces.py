"""The gateway's small pieces on their own: SSE splitting and rewriting, hiding the token fields
only the gateway asked for, rollout keys, upstream URLs."""

from __future__ import annotations

import pytest

from tracerl.gateway import capture, sse
from tracerl.gateway.rollouts import BadKey, check_key
from tracerl.gateway.upstreams import Upstream


def test_events_are_split_wherever_the_pieces_break():
    stream = b'data: {"a": 1}\n\nevent: response.completed\ndata: {"b": 2}\n\ndata: [DONE]\n\n'
    for size in (1, 3, 7, len(stream)):
        splitter, events = sse.EventSplitter(), []
        for i in range(0, len(stream), size):
            events += splitter.feed(stream[i:i + size])
        assert b"".join(events) == stream and len(events) == 3
        assert [sse.data_of(e) for e in events] == [b'{"a": 1}', b'{"b": 2}', sse.DONE]
        assert splitter.rest() == b""


def test_crlf_events_comments_and_a_cut_tail():
    splitter = sse.EventSplitter()
    assert splitter.feed(b": keep-alive\r\n\r\ndata: {\"x\": 1}\r\n\r\ndata: {\"y\"") == [
        b": keep-alive\r\n\r\n", b'data: {"x": 1}\r\n\r\n']
    assert sse.data_of(b": keep-alive\r\n\r\n") is None
    assert splitter.rest() == b'data: {"y"'


def test_rewriting_keeps_the_other_fields():
    event = b"event: response.output_text.delta\nid: 7\ndata: {\"old\": 1}\n\n"
    assert sse.with_data(event, b'{"new": 2}') == b"event: response.output_text.delta\nid: 7\ndata: {\"new\": 2}\n\n"


def test_capture_asks_for_what_is_missing_and_hides_only_that():
    body = {"model": "m", "messages": []}
    added = capture.inject("chat", body)
    assert added == {"return_token_ids", "logprobs"} and body["return_token_ids"] is True and body["logprobs"] is True
    reply = {"prompt_token_ids": [1, 2], "choices": [{"token_ids": [3], "logprobs": {"content": []}, "text": "x"}]}
    capture.hide(reply, added)
    assert reply == {"choices": [{"logprobs": None, "text": "x"}]}

    body = {"model": "m", "prompt": "p", "logprobs": 5}  # the client's own logprobs stay
    assert capture.inject("completions", body) == {"return_token_ids"} and body["logprobs"] == 5
    reply = {"choices": [{"token_ids": [3], "prompt_token_ids": [1], "logprobs": {"token_logprobs": [-1.0]}}]}
    capture.hide(reply, frozenset({"return_token_ids"}))
    assert reply == {"choices": [{"logprobs": {"token_logprobs": [-1.0]}}]}

    body = {"model": "m", "input": "x", "return_token_ids": True}  # asked for by the client: nothing hidden
    assert capture.inject("responses", body) == frozenset()
    capture.hide({"choices": "not a list"}, frozenset({"logprobs"}))  # odd replies are left alone


@pytest.mark.parametrize("key", ["", "a b", "a/b", "é", "x" * 201, "tab\t"])
def test_bad_rollout_keys(key):
    with pytest.raises(BadKey):
        check_key(key)


def test_upstream_urls():
    u = Upstream("http://vllm:8000/v1/")
    assert (u.root, u.base_url.host, u.base_url.port) == ("http://vllm:8000", "vllm", 8000)
    assert u.target("/v1/models") == "http://vllm:8000/v1/models"
    assert Upstream("https://h/openai/v1").target("/v1/x") == "https://h/openai/v1/x"
    assert Upstream("127.0.0.1:9000").root == "http://127.0.0.1:9000"
    assert Upstream("http://h/v1").base_url.port is None  # as the client instrumentation records it
    with pytest.raises(ValueError):
        Upstream("ftp://h")


@pytest.mark.parametrize("args,message", [(["--upstream", "ftp://h"], "expected an http(s) URL"),
                                          (["--upstream", "http://h", "--listen", "nowhere"], "expected HOST:PORT")])
def test_command_line_mistakes_exit_2_with_a_message(args, message):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "tracerl.cli", "gateway", *args], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and message in proc.stderr
