"""Rollouts the trainer does not end: idle ones are ended by the gateway, open ones when it stops;
and ending a rollout waits for its calls still in flight."""

from __future__ import annotations

import secrets
import threading
from concurrent.futures import ThreadPoolExecutor

import openai

from tests.fake_openai_server import Reply
from tests.gateway.gateway_proc import trace_spans
from tests.gateway.test_pause import wait_until
from tracerl import semconv


def ask(base_url: str, headers: dict | None = None) -> str:
    c = openai.OpenAI(base_url=base_url, api_key="sk", max_retries=0, default_headers=headers)
    return c.chat.completions.create(model="policy", messages=[{"role": "user", "content": "hi"}]).choices[0].message.content


def open_keys(gw) -> set:
    return {r["key"] for r in gw.admin("GET", "/admin/rollouts").json()}


def test_an_idle_rollout_is_ended(make_gateway, upstream, collector):
    gw = make_gateway([upstream.base_url], "--rollout-idle", "1")
    key = f"idle-{secrets.token_hex(4)}"
    ask(gw.base_url, {semconv.HEADER_ROLLOUT: key})
    [trace_id] = [r["trace_id"] for r in gw.admin("GET", "/admin/rollouts").json() if r["key"] == key]
    wait_until(lambda: key not in open_keys(gw), "the idle rollout to be ended")
    gw.flush()
    names = [s["SpanName"] for s in trace_spans(collector, trace_id)]
    assert sorted(names) == ["chat policy", semconv.SPAN_ROLLOUT]


def test_stopping_the_gateway_ends_and_exports_open_rollouts(make_gateway, upstream, collector):
    gw = make_gateway([upstream.base_url])
    ro = gw.open_rollout(task_id="left-open")
    ask(ro["base_url"])
    assert gw.stop() == 0
    assert "stopped" in gw.log()
    names = [s["SpanName"] for s in trace_spans(collector, ro["trace_id"])]
    assert sorted(names) == ["chat policy", semconv.SPAN_ROLLOUT]


def test_ending_a_rollout_waits_for_its_calls_in_flight(gateway, upstream, collector):
    hold = threading.Event()
    upstream.script(Reply("late answer", hold=hold))
    ro = gateway.open_rollout(task_id="in-flight")
    with ThreadPoolExecutor(2) as pool:
        call = pool.submit(ask, ro["base_url"])
        wait_until(lambda: len(upstream.requests) == 1, "the call to reach the upstream")
        end = pool.submit(gateway.end_rollout, ro["key"], reward=1.0)
        wait_until(lambda: ro["key"] not in open_keys(gateway), "the rollout to stop taking calls")
        assert not end.done()  # still waiting for the call
        hold.set()
        assert call.result() == "late answer"
        assert end.result()["calls"] == 1
    spans = {s["SpanName"]: s for s in trace_spans(collector, ro["trace_id"])}
    assert set(spans) == {semconv.SPAN_ROLLOUT, "chat policy", semconv.SPAN_REWARD}
    [row] = collector.rows("SELECT max(toUnixTimestamp64Nano(Timestamp) + Duration) AS llm_end FROM otel_traces"
                           " WHERE TraceId = {t:String} AND SpanKind = 'Client'", t=ro["trace_id"])
    [root] = collector.rows("SELECT toUnixTimestamp64Nano(Timestamp) + Duration AS root_end FROM otel_traces"
                            " WHERE TraceId = {t:String} AND SpanName = 'tracerl.rollout'", t=ro["trace_id"])
    assert root["root_end"] >= row["llm_end"]  # the root ended after its call, not before
