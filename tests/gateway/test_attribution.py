"""Rollout attribution without touching the agent: the path prefix, the x-tracerl-rollout header
and the traceparent header; each rollout one trace, with the attributes the trainer assigned."""

from __future__ import annotations

import json
import secrets

import openai
import pytest

from tests.fake_openai_server import Reply, token_ids
from tests.gateway.gateway_proc import llm_spans, trace_spans
from tests.otel_session import traced  # noqa: F401  (fixture)
from tracerl import semconv

ASK = [{"role": "user", "content": "2 + 2?"}]


def agent_calls(base_url: str, n: int = 2, headers: dict | None = None) -> list:
    """What an uninstrumented agent does: n chat calls with the plain openai client."""
    c = openai.OpenAI(base_url=base_url, api_key="sk-agent", max_retries=0, default_headers=headers)
    return [c.chat.completions.create(model="policy", messages=ASK) for _ in range(n)]


def test_registered_rollout_by_path_prefix(gateway, upstream, collector):
    upstream.script(Reply("4"), Reply("4, sure"))
    ro = gateway.open_rollout(key=f"k-{secrets.token_hex(4)}", task_id="add-7", group_id="grp-add",
                              attempt=2, mode="val", policy_version="v7", task={"question": "2 + 2?"})
    assert ro["base_url"] == f"{gateway.url}/rollout/{ro['key']}/v1"
    assert ro["traceparent"].split("-")[1] == ro["trace_id"]
    replies = agent_calls(ro["base_url"])
    step = gateway.admin("POST", f"/admin/rollouts/{ro['key']}/reward", json={"value": 0.25, "name": "format"})
    assert step.status_code == 200
    ended = gateway.end_rollout(ro["key"], reward=1.0, components={"correct": 1.0})
    assert ended["calls"] == 2 and ended["trace_id"] == ro["trace_id"]

    spans = trace_spans(collector, ro["trace_id"])
    [root] = [s for s in spans if s["SpanName"] == semconv.SPAN_ROLLOUT]
    assert root["ParentSpanId"] == "" and root["ScopeName"] == semconv.SCOPE_GATEWAY
    assert {k: v for k, v in root["SpanAttributes"].items()} == {
        semconv.ROLLOUT_TASK_ID: "add-7", semconv.ROLLOUT_GROUP_ID: "grp-add", semconv.ROLLOUT_ATTEMPT: "2",
        semconv.ROLLOUT_MODE: "val", semconv.POLICY_VERSION: "v7",
        semconv.ROLLOUT_TASK: json.dumps({"question": "2 + 2?"}, separators=(",", ":"))}
    llm = [s for s in spans if s["SpanKind"] == "Client"]
    assert [s["SpanAttributes"][semconv.GEN_AI_RESPONSE_ID] for s in llm] == [r.id for r in replies]
    assert {s["ParentSpanId"] for s in llm} == {root["SpanId"]}
    rewards = {s["SpanAttributes"][semconv.REWARD_NAME]: s for s in spans if s["SpanName"] == semconv.SPAN_REWARD}
    assert rewards["format"]["SpanAttributes"][semconv.REWARD_VALUE] == "0.25"
    assert rewards["reward"]["SpanAttributes"][semconv.reward_component("correct")] == "1"
    assert {s["ParentSpanId"] for s in rewards.values()} == {root["SpanId"]}

    [row] = collector.rows("SELECT task_id, group_id, attempt, mode, policy_version, final_reward, llm_calls"
                           " FROM tracerl_rollouts WHERE trace_id = {t:String}", t=ro["trace_id"])
    assert row == {"task_id": "add-7", "group_id": "grp-add", "attempt": 2, "mode": "val",
                   "policy_version": "v7", "final_reward": 1.0, "llm_calls": 2}


@pytest.mark.parametrize("how", ["path", "header"])
def test_unregistered_key_opens_a_rollout_on_first_use(gateway, upstream, collector, how):
    key = f"{how}-{secrets.token_hex(4)}"
    if how == "path":
        agent_calls(f"{gateway.url}/rollout/{key}/v1")
    else:
        agent_calls(gateway.base_url, headers={semconv.HEADER_ROLLOUT: key})
    [listed] = [r for r in gateway.admin("GET", "/admin/rollouts").json() if r["key"] == key]
    assert listed["implicit"] and listed["calls"] == 2
    ended = gateway.end_rollout(key)
    spans = trace_spans(collector, ended["trace_id"])
    [root] = [s for s in spans if s["SpanName"] == semconv.SPAN_ROLLOUT]
    assert root["SpanAttributes"][semconv.ROLLOUT_TASK_ID] == key
    assert root["SpanAttributes"][semconv.ROLLOUT_GROUP_ID] == key
    assert [s["ParentSpanId"] for s in spans if s["SpanKind"] == "Client"] == [root["SpanId"]] * 2


def test_traceparent_header_puts_calls_in_the_callers_trace(gateway, upstream, collector):
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    agent_calls(gateway.base_url, headers={"traceparent": f"00-{trace_id}-{parent}-01"})
    gateway.flush()
    spans = trace_spans(collector, trace_id)
    assert [(s["SpanKind"], s["ParentSpanId"]) for s in spans] == [("Client", parent)] * 2  # no root of its own


def test_without_attribution_each_call_is_a_trace_of_its_own(gateway, upstream, collector):
    replies = agent_calls(gateway.base_url)
    gateway.flush()
    rows = collector.rows("SELECT TraceId, ParentSpanId FROM otel_traces WHERE SpanAttributes['gen_ai.response.id']"
                          " IN {ids:Array(String)} AND ScopeName = 'tracerl.gateway'", ids=[r.id for r in replies])
    assert len(rows) == 2 and rows[0]["TraceId"] != rows[1]["TraceId"]
    assert {r["ParentSpanId"] for r in rows} == {""}


def test_path_prefix_wins_over_header_and_traceparent(gateway, upstream, collector):
    ro = gateway.open_rollout(task_id="precedence")
    other = secrets.token_hex(16)
    agent_calls(ro["base_url"], n=1, headers={semconv.HEADER_ROLLOUT: "not-this-one",
                                                "traceparent": f"00-{other}-{secrets.token_hex(8)}-01"})
    gateway.end_rollout(ro["key"])
    assert len(llm_spans(collector, ro["trace_id"])) == 1
    assert not [r for r in gateway.admin("GET", "/admin/rollouts").json() if r["key"] == "not-this-one"]


def test_malformed_keys_and_traceparents(gateway, upstream):
    c = openai.OpenAI(base_url=gateway.base_url, api_key="sk", max_retries=0,
                      default_headers={semconv.HEADER_ROLLOUT: "has spaces"})
    with pytest.raises(openai.BadRequestError) as err:
        c.chat.completions.create(model="policy", messages=ASK)
    assert err.value.body["code"] == "invalid_rollout_key"
    # a malformed traceparent is ignored (W3C), the call still goes through
    [reply] = agent_calls(gateway.base_url, n=1, headers={"traceparent": "00-nothex-xx-01"})
    assert reply.choices[0].message.content == "ok"


def test_admin_rollout_errors(gateway):
    key = f"dup-{secrets.token_hex(4)}"
    gateway.open_rollout(key=key, task_id="t")
    assert gateway.admin("POST", "/admin/rollouts", json={"key": key, "task_id": "t"}).status_code == 409
    assert gateway.admin("POST", "/admin/rollouts", json={"task_id": "t", "mode": "play"}).status_code == 400
    assert gateway.admin("POST", "/admin/rollouts", json={"mode": "train"}).status_code == 400  # no task nor id
    assert gateway.admin("POST", "/admin/rollouts", content=b"{nope").status_code == 400
    bad = gateway.admin("POST", f"/admin/rollouts/{key}/reward", json={"value": "high"})
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
    missing = gateway.admin("POST", "/admin/rollouts/no-such-key/end")
    assert missing.status_code == 404 and "no-such-key" in missing.json()["error"]["message"]
    gateway.end_rollout(key)


def test_traceparent_rollout_made_by_the_trainer_is_trainable(traced, gateway, upstream, build):  # noqa: F811
    """The trainer opens the rollout itself (`tracerl.rollout`, exported by its own process) and
    hands the agent its traceparent: the gateway's spans complete that rollout."""
    import tracerl

    upstream.script(Reply("4"))
    with tracerl.rollout(task_id="tp-task", group_id="tp-group", attempt=3) as r:
        agent_calls(gateway.base_url, n=1, headers={"traceparent": f"00-{r.trace_id}-{r.span_id}-01"})
        tracerl.emit_reward(1.0)
    traced.flush()
    gateway.flush()
    [t], report = build(r.trace_id)
    assert (t.task_id, t.group_id, t.attempt, t.reward) == ("tp-task", "tp-group", 3, 1.0)
    assert t.response_ids == token_ids("4")


def test_a_traceparent_as_path_key_needs_no_registration(gateway, upstream, collector):
    """For an agent that only reads OPENAI_BASE_URL, a trainer that opened the root span itself
    puts its traceparent in the URL."""
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    agent_calls(f"{gateway.url}/rollout/00-{trace_id}-{parent}-01/v1")
    gateway.flush()
    assert [(s["SpanKind"], s["ParentSpanId"]) for s in trace_spans(collector, trace_id)] == [("Client", parent)] * 2
    assert not [r for r in gateway.admin("GET", "/admin/rollouts").json() if trace_id in r["key"]]
