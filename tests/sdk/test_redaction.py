"""Secrets and configured patterns are masked before spans leave the process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import uuid

import openai

import tracerl
from tracerl import semconv
from tracerl.redaction import build_redactor

OPENAI_KEY = "sk-proj-" + "A1b2C3d4" * 5
AWS_KEY = "AKIA" + "ABCDEFGHIJKLMNOP"


def test_secrets_emails_and_custom_patterns_are_masked_in_the_store(traced, llm):
    text = f"my key is {OPENAI_KEY}, aws {AWS_KEY}, mail me at ann@example.com about ticket-1234"
    client = openai.OpenAI(base_url=llm.base_url, api_key="test", max_retries=0)
    with tracerl.rollout(task_id=f"redact-{uuid.uuid4().hex[:6]}", task={"prompt": text}) as r:
        client.chat.completions.create(model="policy", messages=[{"role": "user", "content": text}])
        tracerl.emit_variable("note", text)
    spans = traced.spans(r.trace_id)
    everything = json.dumps([[s["SpanAttributes"], s["event_attributes"]] for s in spans])
    for secret in (OPENAI_KEY, AWS_KEY, "ann@example.com", "ticket-1234"):
        assert secret not in everything
    [call] = [s for s in spans if s["SpanKind"] == "Client"]
    content = json.loads(call["SpanAttributes"][semconv.GEN_AI_INPUT_MESSAGES])[0]["parts"][0]["content"]
    assert content == ("my key is [REDACTED:openai_key], aws [REDACTED:aws_access_key], "
                       "mail me at [REDACTED:email] about [REDACTED:custom2]")
    # the request that went to the model was not touched: redaction is on the trace only
    assert llm.requests[-1].body["messages"][0]["content"] == text


def test_redactor_specs():
    assert not build_redactor(False) and not build_redactor("off")
    default = build_redactor(True)
    assert default.text(f"k={OPENAI_KEY}") == "k=[REDACTED:openai_key]"
    assert default.text("ann@example.com") == "ann@example.com"  # personal data only when asked
    custom = build_redactor(["email", re.compile(r"\d{3}-\d{4}")])
    assert custom.text("ann@example.com 555-1234") == "[REDACTED:email] [REDACTED:custom1]"
    assert build_redactor("all").text("Bearer abcdefghijklmnop1234") == "[REDACTED:bearer_token]"


def test_env_variable_selects_patterns(monkeypatch):
    monkeypatch.setenv(semconv.ENV_REDACT, "email")
    assert build_redactor().text(f"a@b.io {OPENAI_KEY}") == f"[REDACTED:email] {OPENAI_KEY}"
    monkeypatch.setenv(semconv.ENV_REDACT, "none")
    assert not build_redactor()


def test_redaction_is_added_to_a_provider_the_app_built_itself(collector, tmp_path):
    """tracerl.init() in a process that already has a tracer provider adds only redaction."""
    service = f"adopt-{uuid.uuid4().hex[:6]}"
    script = textwrap.dedent(f"""
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        import tracerl

        provider = TracerProvider(resource=Resource.create({{"service.name": "{service}"}}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint="http://{collector.grpc_endpoint}")))
        trace.set_tracer_provider(provider)
        assert tracerl.init() is provider
        with tracerl.rollout(task_id="t", task={{"key": "{OPENAI_KEY}"}}):
            pass
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    [row] = collector.rows("SELECT SpanAttributes FROM otel_traces WHERE ServiceName = {s:String}", s=service)
    assert json.loads(row["SpanAttributes"][semconv.ROLLOUT_TASK]) == {"key": "[REDACTED:openai_key]"}
