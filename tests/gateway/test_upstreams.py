"""Several upstreams: each rollout sticks to one (its prefix cache stays warm), rollouts spread
over all of them, and an upstream that is down is skipped for the next in line."""

from __future__ import annotations

import secrets

import openai

from tests.fake_openai_server import FakeOpenAIServer
from tests.gateway.gateway_proc import llm_spans
from tracerl import semconv
from tracerl.gateway.upstreams import Upstreams


def ask(base_url: str, text: str, headers: dict | None = None):
    c = openai.OpenAI(base_url=base_url, api_key="sk", max_retries=0, default_headers=headers)
    return c.chat.completions.create(model="policy", messages=[{"role": "user", "content": text}])


def served_by(servers, text: str) -> set[int]:
    return {i for i, s in enumerate(servers) for r in s.requests if r.body["messages"][0]["content"] == text}


def test_each_rollout_sticks_to_one_upstream(make_gateway, collector):
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        servers = [a, b]
        gw = make_gateway([a.base_url, b.base_url], "--capture-tokens")
        keys = [f"stick-{i}" for i in range(8)]
        for turn in range(3):  # interleaved, as concurrent rollouts would be
            for key in keys:
                ask(f"{gw.url}/rollout/{key}/v1", f"{key} turn {turn}")
        trace_id = secrets.token_hex(16)
        for turn in range(3):  # traceparent rollouts stick by their trace id
            ask(gw.base_url, f"tp turn {turn}", headers={"traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01"})

        homes = {}
        for key in keys + ["tp"]:
            used = set().union(*(served_by(servers, f"{key} turn {t}") for t in range(3)))
            assert len(used) == 1, f"rollout {key} was served by upstreams {used}"
            homes[key] = used.pop()
        assert set(homes.values()) == {0, 1}  # both upstreams carry rollouts
        expected = Upstreams([a.base_url, b.base_url])  # the same choice, computed here
        assert all(homes[k] == expected.all.index(expected.ranked(k)[0]) for k in keys)

        status = gw.admin("GET", "/admin/status").json()
        assert sum(u["calls"] for u in status["upstreams"]) == 27
        # each span names the upstream that served its call
        ended = gw.end_rollout(keys[0])
        ports = {s["SpanAttributes"][semconv.SERVER_PORT] for s in llm_spans(collector, ended["trace_id"])}
        assert ports == {str(servers[homes[keys[0]]].port)}


def test_an_upstream_that_is_down_is_skipped(make_gateway, collector):
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        gw = make_gateway([a.base_url, b.base_url])
        ranking = Upstreams([a.base_url, b.base_url])
        key = next(f"fail-{i}" for i in range(100) if ranking.ranked(f"fail-{i}")[0].root == a.base_url[:-3])
        ask(f"{gw.url}/rollout/{key}/v1", "before")
        assert served_by([a, b], "before") == {0}
        a_port = a.port
        a.stop()
        reply = ask(f"{gw.url}/rollout/{key}/v1", "after")
        assert reply.choices[0].message.content == "ok" and served_by([a, b], "after") == {1}
        ended = gw.end_rollout(key)
        ports = [s["SpanAttributes"][semconv.SERVER_PORT] for s in llm_spans(collector, ended["trace_id"])]
        assert ports == [str(a_port), str(b.port)]


def test_ranking_is_stable_and_moves_few_keys_when_an_upstream_is_added():
    two = Upstreams(["http://h1:8000/v1", "http://h2:8000/v1"])
    three = Upstreams(["http://h1:8000/v1", "http://h2:8000/v1", "http://h3:8000"])
    keys = [f"k{i}" for i in range(300)]
    first = {k: two.ranked(k)[0].root for k in keys}
    assert first == {k: Upstreams(["http://h2:8000/v1", "http://h1:8000/v1"]).ranked(k)[0].root for k in keys}
    moved = [k for k in keys if three.ranked(k)[0].root != first[k]]
    assert all(three.ranked(k)[0].root == "http://h3:8000" for k in moved)  # only to the new one
    assert 0 < len(moved) < 200
    # without a key: round-robin
    assert [two.ranked(None)[0].root for _ in range(4)] == ["http://h1:8000", "http://h2:8000"] * 2
