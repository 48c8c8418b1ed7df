"""Mask secrets in span attributes before they leave the process.

Prompts and tool results routinely carry API keys and personal data; traces end up in a shared
store. Redaction therefore runs on by default for common secret formats, and more patterns
(e-mail addresses, custom regexes) can be switched on with ``redact=`` or ``TRACERL_REDACT``.

Two placements, one `Redactor`:
- `RedactingSpanExporter` wraps the exporter tracerl sets up itself, so masking runs in the
  export thread, off the agent's hot path.
- `RedactingSpanProcessor` wraps the export processors of a tracer provider someone else built
  (a user's own setup, another configurator), masking a copy of each span in ``on_end``.
"""

from __future__ import annotations

import os
import re
from typing import Iterable, Sequence

from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from . import semconv

MASK = "[REDACTED:{}]"

# Named patterns. "secrets" (the default) is every pattern but the personal-data ones.
PATTERNS: dict[str, str] = {
    "openai_key": r"\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    "aws_access_key": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "github_token": r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
    "google_api_key": r"\bAIza[0-9A-Za-z_\-]{35}\b",
    "slack_token": r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    "bearer_token": r"\b[Bb](?i:earer)\s+[A-Za-z0-9\-._~+/]{16,}=*",
    "jwt": r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    "private_key": r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    "email": r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b",
}
PERSONAL = {"email"}
SECRETS = [name for name in PATTERNS if name not in PERSONAL]

# Attributes that hold numbers only; scanning them is wasted work.
_SKIP_KEYS = frozenset({semconv.LLM_PROMPT_TOKEN_IDS, semconv.LLM_RESPONSE_TOKEN_IDS,
                        semconv.LLM_RESPONSE_LOGPROBS})

_OFF = {"", "0", "off", "false", "none", "no"}


class Redactor:
    """Applies a list of ``(name, compiled regex)`` to strings."""

    def __init__(self, patterns: Sequence[tuple[str, re.Pattern]]):
        self.patterns = list(patterns)
        # One pass over the text finds out whether any pattern can match: almost no value holds
        # a secret, so the per-pattern substitutions run rarely. (Custom patterns with global
        # inline flags cannot be joined; then every pattern runs.)
        try:
            self._any = re.compile("|".join(f"(?:{p.pattern})" for _, p in self.patterns)) if self.patterns else None
        except re.error:
            self._any = None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def text(self, value: str) -> str:
        if self._any is not None and self._any.search(value) is None:
            return value
        for name, pattern in self.patterns:
            value = pattern.sub(MASK.format(name), value)
        return value

    def value(self, value):
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], str):
            return tuple(self.text(v) for v in value)
        return value

    def attributes(self, attributes):
        if not attributes:
            return attributes
        return {k: (v if k in _SKIP_KEYS else self.value(v)) for k, v in attributes.items()}

    def span(self, span: ReadableSpan) -> ReadableSpan:
        """A masked copy of ``span`` (finished spans are immutable)."""
        events = [Event(e.name, self.attributes(e.attributes), e.timestamp) for e in span.events]
        status = span.status
        if status.description:
            status = Status(status.status_code, self.text(status.description))
        return ReadableSpan(
            name=span.name, context=span.context, parent=span.parent, resource=span.resource,
            attributes=self.attributes(span.attributes), events=events, links=span.links,
            kind=span.kind, status=status, start_time=span.start_time, end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )


def build_redactor(spec=None) -> Redactor:
    """Turn ``redact=`` / ``TRACERL_REDACT`` into a `Redactor`.

    ``None`` reads ``TRACERL_REDACT`` (unset means the default, "secrets"). ``True`` is the
    default; ``False`` or "off" turns redaction off. A string is a comma-separated list; a
    sequence is a list. Items are pattern names (``email``, ``openai_key``...), the groups
    ``secrets`` / ``default`` / ``all``, ``re:<regex>`` for a custom regex, or compiled patterns.
    """
    if spec is None:
        spec = os.environ.get(semconv.ENV_REDACT)
        if spec is None:
            spec = True
    if spec is True:
        spec = ["secrets"]
    if spec is False or (isinstance(spec, str) and spec.strip().lower() in _OFF):
        return Redactor([])
    items: Iterable = spec.split(",") if isinstance(spec, str) else spec
    chosen: list[tuple[str, re.Pattern]] = []
    seen: set[str] = set()

    def add(name: str, regex) -> None:
        if name not in seen:
            seen.add(name)
            chosen.append((name, regex if isinstance(regex, re.Pattern) else re.compile(regex)))

    for i, item in enumerate(items):
        if isinstance(item, re.Pattern):
            add(f"custom{i}", item)
            continue
        item = str(item).strip()
        key = item.lower()
        if not item:
            continue
        if key in ("secrets", "default"):
            for name in SECRETS:
                add(name, PATTERNS[name])
        elif key == "all":
            for name, regex in PATTERNS.items():
                add(name, regex)
        elif key in PATTERNS:
            add(key, PATTERNS[key])
        elif item.startswith("re:"):
            add(f"custom{i}", item[3:])
        else:
            add(f"custom{i}", item)  # a bare regex
    return Redactor(chosen)


class RedactingSpanExporter(SpanExporter):
    """Masks each span of a batch, then hands the batch to ``inner``. Runs in the export thread."""

    def __init__(self, inner: SpanExporter, redactor: Redactor):
        self.inner = inner
        self.redactor = redactor

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.redactor:
            spans = [self.redactor.span(s) for s in spans]
        return self.inner.export(spans)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class RedactingSpanProcessor(SpanProcessor):
    """Wraps a processor of a provider tracerl did not build: it sees masked copies at ``on_end``."""

    def __init__(self, inner: SpanProcessor, redactor: Redactor):
        self.inner = inner
        self.redactor = redactor

    def on_start(self, span, parent_context=None) -> None:
        self.inner.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self.inner.on_end(self.redactor.span(span) if self.redactor else span)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)
