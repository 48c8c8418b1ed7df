"""Rollout identity from outside the process: TRACEPARENT and tracerl.rollout.* resource keys."""

from __future__ import annotations

import uuid

import pytest

from tracerl import semconv
from tests.sdk.agent_runner import run_agent

SQL = ("SELECT TraceId, ParentSpanId, ResourceAttributes, SpanAttributes FROM otel_traces"
       " WHERE ServiceName = {svc:String}")


@pytest.mark.parametrize("launch", ["opentelemetry-instrument", "tracerl.init"])
def test_traceparent_joins_the_trainers_trace(collector, llm, launch):
    service = f"identity-{uuid.uuid4().hex[:6]}"
    trace_id, parent_id = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    _, proc = run_agent(base_url=llm.base_url, endpoint=collector.grpc_endpoint,
                        instrument=launch == "opentelemetry-instrument",
                        env={"OTEL_SERVICE_NAME": service, "AGENT_MODE": "identity",
                             "TRACEPARENT": f"00-{trace_id}-{parent_id}-01",
                             "OTEL_RESOURCE_ATTRIBUTES": "tracerl.rollout.task_id=task-9,tracerl.rollout.mode=val"})
    assert proc.returncode == 0, proc.stderr
    rows = collector.rows(SQL, svc=service)
    assert len(rows) == 2
    assert {r["TraceId"] for r in rows} == {trace_id}  # both threads' calls are in the trainer's trace
    # the main thread's call is a child of the TRACEPARENT span; the worker thread's has no
    # inherited context, yet still lands in the same trace
    assert parent_id in {r["ParentSpanId"] for r in rows}
    for r in rows:
        assert r["ResourceAttributes"][semconv.ROLLOUT_TASK_ID] == "task-9"
        assert r["ResourceAttributes"][semconv.ROLLOUT_MODE] == "val"


def test_resource_attributes_alone_make_the_process_one_trace(collector, llm):
    service = f"identity-res-{uuid.uuid4().hex[:6]}"
    _, proc = run_agent(base_url=llm.base_url, endpoint=collector.grpc_endpoint, instrument=True,
                        env={"OTEL_SERVICE_NAME": service, "AGENT_MODE": "identity",
                             "OTEL_RESOURCE_ATTRIBUTES": "tracerl.rollout.task_id=task-10"})
    assert proc.returncode == 0, proc.stderr
    rows = collector.rows(SQL, svc=service)
    assert len(rows) == 2 and len({r["TraceId"] for r in rows}) == 1
    assert all(r["ParentSpanId"] == "" for r in rows)


def test_ordinary_process_gets_a_trace_per_root_span(collector, llm):
    service = f"identity-none-{uuid.uuid4().hex[:6]}"
    _, proc = run_agent(base_url=llm.base_url, endpoint=collector.grpc_endpoint, instrument=True,
                        env={"OTEL_SERVICE_NAME": service, "AGENT_MODE": "identity"})
    assert proc.returncode == 0, proc.stderr
    assert len({r["TraceId"] for r in collector.rows(SQL, svc=service)}) == 2


def test_malformed_traceparent_is_ignored(collector, llm):
    service = f"identity-bad-{uuid.uuid4().hex[:6]}"
    _, proc = run_agent(base_url=llm.base_url, endpoint=collector.grpc_endpoint, instrument=False,
                        env={"OTEL_SERVICE_NAME": service, "AGENT_MODE": "identity", "TRACEPARENT": "garbage"})
    assert proc.returncode == 0, proc.stderr
    assert "malformed TRACEPARENT" in proc.stderr
    assert len(collector.rows(SQL, svc=service)) == 2
