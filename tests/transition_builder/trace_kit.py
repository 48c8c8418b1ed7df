"""Hand-built traces for the builder's tests: spans written as `otel_traces` rows.

    t = TraceKit()
    root = t.rollout("task-1", 0, 100)
    solver = t.agent("solver", root, 1, 90)
    t.llm(solver, 2, 10, prompt_ids=[1, 2], response_ids=[3], logprobs=[-0.5])
    t.reward(1.0, root, at=95)
    t.insert(collector.client())

Times are milliseconds after the kit's base time; attribute values are strings, as the contrib
exporter stores them (arrays as JSON).
"""

from __future__ import annotations

import json
import secrets
import uuid
from datetime import datetime, timedelta, timezone

from tracerl import semconv

COLUMNS = ["Timestamp", "TraceId", "SpanId", "ParentSpanId", "TraceState", "SpanName", "SpanKind", "ServiceName",
           "ResourceAttributes", "ScopeName", "ScopeVersion", "SpanAttributes", "Duration", "StatusCode",
           "StatusMessage"]


def ids(values) -> str:
    return json.dumps(list(values), separators=(",", ":"))


def text_message(role: str, text: str) -> dict:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


class TraceKit:
    def __init__(self, service: str = "tb-test", trace_id: str | None = None, resource: dict | None = None,
                 base: datetime | None = None):
        self.trace_id = trace_id or uuid.uuid4().hex
        self.service = service
        self.resource = {"service.name": service, **(resource or {})}
        self.base = base or datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(seconds=5)
        self.rows: list[list] = []

    def span(self, name: str, parent: str, start: float, end: float, attrs: dict | None = None,
             kind: str = "Internal", span_id: str | None = None, status: str = "Unset") -> str:
        span_id = span_id or secrets.token_hex(8)
        attrs = {k: v if isinstance(v, str) else json.dumps(v) for k, v in (attrs or {}).items()}
        self.rows.append([self.base + timedelta(milliseconds=start), self.trace_id, span_id, parent or "", "", name,
                          kind, self.service, dict(self.resource), "tests", "", attrs,
                          int((end - start) * 1_000_000), status, ""])
        return span_id

    def rollout(self, task_id: str = "task", start: float = 0, end: float = 1000, *, group_id: str | None = None,
                attempt: int = 0, mode: str = "train", **attrs) -> str:
        return self.span(semconv.SPAN_ROLLOUT, "", start, end, {
            semconv.ROLLOUT_TASK_ID: task_id, semconv.ROLLOUT_GROUP_ID: group_id or task_id,
            semconv.ROLLOUT_ATTEMPT: str(attempt), semconv.ROLLOUT_MODE: mode, **attrs})

    def agent(self, name: str, parent: str, start: float, end: float) -> str:
        return self.span(f"invoke_agent {name}", parent, start, end, {
            semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT, semconv.GEN_AI_AGENT_NAME: name})

    def tool(self, name: str, parent: str, start: float, end: float) -> str:
        return self.span(f"execute_tool {name}", parent, start, end, {
            semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL, semconv.GEN_AI_TOOL_NAME: name})

    def llm(self, parent: str, start: float, end: float, *, prompt_ids=None, response_ids=None, logprobs=None,
            messages=None, answer: str | None = None, response_id: str | None = None, span_id: str | None = None,
            **extra) -> str:
        """A GenAI chat span the way tracerl's OpenAI instrumentation writes it."""
        attrs = {semconv.GEN_AI_OPERATION_NAME: semconv.OP_CHAT, semconv.GEN_AI_REQUEST_MODEL: "policy"}
        if messages is not None:
            attrs[semconv.GEN_AI_INPUT_MESSAGES] = json.dumps(messages)
        if answer is not None:
            attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = json.dumps([text_message("assistant", answer)])
        if response_id:
            attrs[semconv.GEN_AI_RESPONSE_ID] = response_id
        if prompt_ids is not None:
            attrs[semconv.LLM_PROMPT_TOKEN_IDS] = ids(prompt_ids)
        if response_ids is not None:
            attrs[semconv.LLM_RESPONSE_TOKEN_IDS] = ids(response_ids)
        if logprobs is not None:
            attrs[semconv.LLM_RESPONSE_LOGPROBS] = ids(logprobs)
        attrs.update(extra)
        return self.span("chat policy", parent, start, end, attrs, kind="Client", span_id=span_id)

    def reward(self, value: float, parent: str, at: float, name: str = "reward", **components) -> str:
        attrs = {semconv.REWARD_VALUE: repr(float(value)), semconv.REWARD_NAME: name}
        attrs.update({semconv.reward_component(k): repr(float(v)) for k, v in components.items()})
        return self.span(semconv.SPAN_REWARD, parent, at, at, attrs)

    def insert(self, client, rows: list | None = None) -> "TraceKit":
        client.insert("otel_traces", rows if rows is not None else self.rows, column_names=COLUMNS)
        return self
