"""The span of one model call through the gateway, in the OpenAI-client instrumentation's shape.

The attributes come from that instrumentation's own builders (`request_attributes`,
`span_name`, the `Outcome` readers and stream accumulators, `attributes`), fed with the JSON the
client sent and the JSON the server returned instead of openai's Python objects, so a call
recorded here and the same call recorded by an instrumented client carry the same keys and
values. Only the instrumentation scope differs (``tracerl.gateway``).

As in the instrumentation, a bug here is logged once and the call goes on unrecorded: tracing
must never fail a call.
"""

from __future__ import annotations

import logging

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from tracerl import semconv
from tracerl.instrumentations import OnceLogger
from tracerl.instrumentations.openai.request import request_attributes, span_name
from tracerl.instrumentations.openai.response import OUTCOME, attributes
from tracerl.instrumentations.openai.stream import ACCUMULATOR, record_error

logger = logging.getLogger("tracerl.gateway")
log_bug = OnceLogger(logger)


class CallRecord:
    def __init__(self, tracer: trace.Tracer, endpoint: str, body: dict, upstream, parent):
        self.endpoint = endpoint
        self.span = None
        self.accumulator = None
        try:
            attrs = request_attributes(endpoint, body, upstream)
            self.span = tracer.start_span(span_name(endpoint, attrs), context=parent, kind=SpanKind.CLIENT,
                                          attributes=attrs)
        except Exception:
            log_bug(f"{endpoint} request")

    def upstream(self, upstream) -> None:
        """The call went to another upstream than first chosen (failover): say which."""
        if self.span is not None and upstream.base_url.host:
            self.span.set_attribute(semconv.SERVER_ADDRESS, upstream.base_url.host)
            if upstream.base_url.port:
                self.span.set_attribute(semconv.SERVER_PORT, upstream.base_url.port)

    def reply(self, reply: dict) -> None:
        """A whole (non-streamed) reply."""
        if self.span is None:
            return
        try:
            self.span.set_attributes(attributes(OUTCOME[self.endpoint](reply)))
        except Exception:
            log_bug(f"{self.endpoint} response")

    def chunk(self, chunk: dict) -> None:
        """One event of a streamed reply; the outcome is set when the stream ends."""
        if self.span is None:
            return
        try:
            if self.accumulator is None:
                self.accumulator = ACCUMULATOR[self.endpoint]()
            self.accumulator.add(chunk)
        except Exception:
            log_bug(f"{self.endpoint} stream chunk")

    def http_error(self, status: int, detail: str) -> None:
        """The upstream answered with an error status; ``error.type`` is the status code, as
        the GenAI conventions name HTTP errors."""
        if self.span is None:
            return
        self.span.set_attribute(semconv.ERROR_TYPE, str(status))
        self.span.set_status(trace.Status(trace.StatusCode.ERROR, f"HTTP {status}: {detail[:500]}"))

    def failed(self, error: BaseException) -> None:
        if self.span is not None:
            record_error(self.span, error)

    def end(self) -> None:
        """End the span, with what a stream delivered so far when it was one."""
        if self.span is None:
            return
        if self.accumulator is not None:
            try:
                self.span.set_attributes(attributes(self.accumulator.outcome()))
            except Exception:
                log_bug(f"{self.endpoint} stream outcome")
        self.span.end()
        self.span = None
