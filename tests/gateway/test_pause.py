"""Pause / resume around a weight update: calls in flight finish, new calls wait (or get 503 with
Retry-After after the pause timeout), and only the token holder may pause."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest

from tests.fake_openai_server import Reply
from tests.gateway.conftest import TOKEN


def ask(base_url: str, text: str, stream: bool = False) -> str:
    c = openai.OpenAI(base_url=base_url, api_key="sk", max_retries=0)
    messages = [{"role": "user", "content": text}]
    if stream:
        return "".join(ch.choices[0].delta.content or "" for ch in
                       c.chat.completions.create(model="policy", messages=messages, stream=True) if ch.choices)
    return c.chat.completions.create(model="policy", messages=messages).choices[0].message.content


def wait_until(condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def status(gateway) -> dict:
    return gateway.admin("GET", "/admin/status").json()


@pytest.fixture
def resumed_after(gateway):
    """Resume the shared gateway whatever happens, so one failure does not leave it paused for
    the tests after it."""
    yield gateway
    gateway.admin("POST", "/admin/resume")


def test_pause_lets_calls_in_flight_finish_and_holds_new_ones_until_resume(resumed_after, upstream):
    gateway = resumed_after
    hold = threading.Event()
    upstream.script(Reply("slow answer", hold=hold), Reply("slow stream", hold=hold))
    with ThreadPoolExecutor(4) as pool:
        in_flight = [pool.submit(ask, gateway.base_url, "first"),
                     pool.submit(ask, gateway.base_url, "streamed", True)]
        wait_until(lambda: len(upstream.requests) == 2, "both calls to reach the upstream")

        paused = gateway.admin("POST", "/admin/pause").json()
        assert paused == {"paused": True, "in_flight": 2, "waiting": 0}
        held = pool.submit(ask, gateway.base_url, "second")
        wait_until(lambda: status(gateway)["waiting"] == 1, "the new call to wait at the gate")
        assert len(upstream.requests) == 2  # not forwarded while paused

        with httpx.Client(base_url=gateway.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as admin:
            drain = pool.submit(admin.post, "/admin/pause", json={"wait": True, "timeout": 30})
            hold.set()  # the calls in flight finish while paused
            # which of the two reached the upstream first (and so got which reply) is up to the OS
            assert sorted(f.result() for f in in_flight) == ["slow answer", "slow stream"]
            drained = drain.result().json()
        assert drained["drained"] is True and drained["in_flight"] == 0 and drained["waiting"] == 1
        assert not held.done() and len(upstream.requests) == 2

        assert gateway.admin("POST", "/admin/resume").json()["paused"] is False
        assert held.result() == "ok"
    assert upstream.requests[-1].body["messages"][0]["content"] == "second"
    final = status(gateway)
    assert (final["paused"], final["in_flight"], final["waiting"]) == (False, 0, 0)


def test_a_call_waiting_past_the_pause_timeout_gets_503_with_retry_after(make_gateway, upstream):
    gw = make_gateway([upstream.base_url], "--pause-timeout", "0.3")
    gw.admin("POST", "/admin/pause")
    r = gw.http.post("/v1/chat/completions", json={"model": "policy", "messages": [{"role": "user", "content": "x"}]})
    assert r.status_code == 503 and r.headers["Retry-After"] == "5"
    assert r.json()["error"]["code"] == "paused" and r.json()["error"]["type"] == "service_unavailable"
    with pytest.raises(openai.InternalServerError):  # what an agent's client sees once its retries run out
        ask(gw.base_url, "x")
    assert upstream.requests == []
    gw.admin("POST", "/admin/resume")
    assert ask(gw.base_url, "x") == "ok"


@pytest.mark.parametrize("method,path", [("POST", "/admin/pause"), ("POST", "/admin/resume"),
                                         ("GET", "/admin/status"), ("POST", "/admin/rollouts"),
                                         ("GET", "/admin/rollouts"), ("POST", "/admin/flush"),
                                         ("POST", "/admin/rollouts/x/end"), ("POST", "/admin/rollouts/x/reward")])
def test_admin_needs_the_token(gateway, method, path):
    for token in ("", "wrong"):
        r = gateway.admin(method, path, token=token)
        assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    assert status(gateway)["paused"] is False  # nothing happened
    assert ask(gateway.base_url, "model calls need no token") == "ok"
