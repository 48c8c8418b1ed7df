"""Every error path: the agent gets an OpenAI-style error it understands, the span records the
failure, and the gateway keeps serving."""

from __future__ import annotations

import json
import secrets
import socket
import threading

import httpx
import openai
import pytest

from tests.collector_proc import free_port
from tests.fake_openai_server import Reply
from tests.gateway.gateway_proc import llm_spans
from tests.gateway.test_pause import status, wait_until
from tracerl import semconv

CHAT = {"model": "policy", "messages": [{"role": "user", "content": "hi"}]}


def still_serving(gw) -> None:
    assert gw.alive()
    r = gw.http.post("/v1/chat/completions", json=CHAT)
    assert r.status_code == 200, r.text


def error_of(r: httpx.Response) -> dict:
    assert r.headers["Content-Type"].startswith("application/json")
    return r.json()["error"]


def span_of_call(gw, collector, key: str) -> dict:
    ended = gw.end_rollout(key)
    [span] = llm_spans(collector, ended["trace_id"])
    return span


@pytest.mark.parametrize("body,message", [(b"{not json", "not valid JSON"), (b"", "not valid JSON"),
                                          (b"[1, 2]", "must be a JSON object"), (b"\xff\xfe", "not valid JSON")])
def test_bad_request_bodies_get_400(gateway, upstream, body, message):
    r = gateway.http.post("/v1/chat/completions", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    err = error_of(r)
    assert message in err["message"] and err["type"] == "invalid_request_error" and err["code"] == "invalid_json"
    assert upstream.requests == []
    still_serving(gateway)


def test_unknown_routes_and_methods(gateway):
    r = gateway.http.get("/nowhere")
    assert r.status_code == 404 and "GET /nowhere" in error_of(r)["message"]
    r = gateway.http.delete("/admin/pause")
    assert r.status_code == 405 and error_of(r)["type"] == "invalid_request_error"
    still_serving(gateway)


def test_body_over_the_limit_gets_413(make_gateway, upstream):
    gw = make_gateway([upstream.base_url], "--max-body-mb", "0.01")
    big = dict(CHAT, messages=[{"role": "user", "content": "x" * 20_000}])
    r = gw.http.post("/v1/chat/completions", json=big)
    assert r.status_code == 413 and error_of(r)["code"] == "413"
    assert upstream.requests == []
    still_serving(gw)


def test_malformed_http_does_not_bring_it_down(gateway):
    with socket.create_connection(("127.0.0.1", gateway.port)) as s:
        s.sendall(b"THIS IS NOT HTTP\r\n\r\n")
        assert s.recv(100).split(b"\r\n")[0].endswith(b" 400 Bad Request")
    with socket.create_connection(("127.0.0.1", gateway.port)) as s:  # a client that hangs up mid-request
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"mo")
    still_serving(gateway)


def test_upstream_down_gets_502_and_an_error_span(make_gateway, collector):
    gw = make_gateway([f"http://127.0.0.1:{free_port()}/v1"])
    key = f"down-{secrets.token_hex(4)}"
    r = gw.http.post("/v1/chat/completions", json=CHAT, headers={semconv.HEADER_ROLLOUT: key})
    assert r.status_code == 502
    err = error_of(r)
    assert err["code"] == "upstream_unreachable" and err["type"] == "upstream_error"
    with pytest.raises(openai.InternalServerError):
        openai.OpenAI(base_url=gw.base_url, api_key="sk", max_retries=0).models.list()
    span = span_of_call(gw, collector, key)
    assert span["StatusCode"] == "Error" and span["SpanAttributes"][semconv.ERROR_TYPE] == "ClientConnectorError"
    assert gw.alive()


def test_upstream_silence_gets_504_or_an_error_event_mid_stream(make_gateway, upstream, collector):
    gw = make_gateway([upstream.base_url], "--upstream-timeout", "0.5")
    hold = threading.Event()
    try:
        upstream.script(Reply("late", hold=hold))
        key = f"slow-{secrets.token_hex(4)}"
        r = gw.http.post("/v1/chat/completions", json=CHAT, headers={semconv.HEADER_ROLLOUT: key})
        assert r.status_code == 504 and error_of(r)["code"] == "upstream_timeout"
        span = span_of_call(gw, collector, key)
        assert span["StatusCode"] == "Error" and span["SpanAttributes"][semconv.ERROR_TYPE].endswith("TimeoutError")

        upstream.script(Reply("first then nothing", hold=hold))  # the stream stalls after its first event
        c = openai.OpenAI(base_url=gw.base_url, api_key="sk", max_retries=0)
        with pytest.raises(openai.APIError) as caught:
            list(c.chat.completions.create(model="policy", messages=CHAT["messages"], stream=True))
        assert "did not answer" in str(caught.value)
    finally:
        hold.set()
    still_serving(gw)


@pytest.mark.parametrize("status", [400, 429, 500, 503])
def test_upstream_error_statuses_are_passed_through(gateway, upstream, collector, status):
    upstream.script(Reply(status=status, error=f"upstream says {status}"))
    key = f"status-{secrets.token_hex(4)}"
    r = gateway.http.post("/v1/chat/completions", json=CHAT, headers={semconv.HEADER_ROLLOUT: key})
    assert r.status_code == status and error_of(r)["message"] == f"upstream says {status}"
    span = span_of_call(gateway, collector, key)
    assert span["StatusCode"] == "Error" and span["SpanAttributes"][semconv.ERROR_TYPE] == str(status)
    assert f"upstream says {status}" in span["StatusMessage"]
    still_serving(gateway)


def test_a_stream_cut_by_the_upstream_ends_with_an_error_event(gateway, upstream, collector):
    upstream.script(Reply("alpha beta gamma delta", cut_after=3))  # role chunk, "alpha ", "beta ", then gone
    key = f"cut-{secrets.token_hex(4)}"
    c = openai.OpenAI(base_url=gateway.base_url, api_key="sk", max_retries=0,
                      default_headers={semconv.HEADER_ROLLOUT: key})
    received = []
    with pytest.raises(openai.APIError) as caught:
        for chunk in c.chat.completions.create(model="policy", messages=CHAT["messages"], stream=True):
            received.append(chunk.choices[0].delta.content or "")
    assert "".join(received) == "alpha beta " and "upstream failed" in str(caught.value)
    span = span_of_call(gateway, collector, key)
    assert span["StatusCode"] == "Error"
    out = json.loads(span["SpanAttributes"][semconv.GEN_AI_OUTPUT_MESSAGES])
    assert out[0]["parts"] == [{"type": "text", "content": "alpha beta "}]  # what was delivered
    still_serving(gateway)


def test_an_agent_that_hangs_up_mid_stream(gateway, upstream, collector):
    hold = threading.Event()
    upstream.script(Reply("alpha beta gamma delta", hold=hold))
    key = f"gone-{secrets.token_hex(4)}"
    with httpx.stream("POST", gateway.base_url + "/chat/completions", json=dict(CHAT, stream=True),
                      headers={semconv.HEADER_ROLLOUT: key}, timeout=20) as resp:
        next(line for line in resp.iter_lines() if line.startswith("data:"))
    hold.set()  # the upstream goes on; the gateway finds the agent gone at its next write
    wait_until(lambda: status(gateway)["in_flight"] == 0, "the call to end")
    span = span_of_call(gateway, collector, key)
    assert span["StatusCode"] == "Unset"  # the agent's choice, not a failure (as for a closed client stream)
    still_serving(gateway)
