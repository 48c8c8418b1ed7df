"""The wrappers around ``create``: one span per call, never in the way of the call.

Everything tracerl computes (attributes, token capture, stream proxies) runs inside ``try``:
an instrumentation bug is logged once and the call proceeds as if uninstrumented. Errors of the
call itself are recorded on the span and re-raised as they are.
"""

from __future__ import annotations

import logging

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import SpanKind

from .. import OnceLogger
from .request import request_attributes, span_name, with_token_capture
from .response import OUTCOME, attributes
from .stream import ACCUMULATOR, TracedAsyncStream, TracedStream, _SpanEnd, record_error

logger = logging.getLogger("tracerl.instrumentations.openai")
log_bug = OnceLogger(logger)


def _start(tracer, endpoint: str, instance, kwargs: dict):
    """(span, token, kwargs to send) or None when tracing is off or failed."""
    if not is_instrumentation_enabled():
        return None
    try:
        send = with_token_capture(endpoint, kwargs)
        attrs = request_attributes(endpoint, kwargs, getattr(instance, "_client", None))
        span = tracer.start_span(span_name(endpoint, attrs), kind=SpanKind.CLIENT, attributes=attrs)
        token = otel_context.attach(trace.set_span_in_context(span))
        return span, token, send
    except Exception:
        log_bug(f"{endpoint} request")
        return None


def _finish(endpoint: str, span, result, stream_types):
    """End the span now, or hand it to a stream proxy that ends it later."""
    try:
        sync_stream, async_stream = stream_types
        if sync_stream is not None and isinstance(result, sync_stream):
            return TracedStream(result, _SpanEnd(span, ACCUMULATOR[endpoint](), log_bug))
        if async_stream is not None and isinstance(result, async_stream):
            return TracedAsyncStream(result, _SpanEnd(span, ACCUMULATOR[endpoint](), log_bug))
        reply = _parsed(result)
        if hasattr(reply, "choices") or hasattr(reply, "output"):
            span.set_attributes(attributes(OUTCOME[endpoint](reply)))
    except Exception:
        log_bug(f"{endpoint} response")
    span.end()
    return result


def _parsed(result):
    """The reply inside openai's raw-response wrapper (``with_raw_response.create``, the way
    LangChain's ChatOpenAI calls the client), else ``result`` itself. ``parse()`` caches its
    result, so the caller's own ``parse()`` later costs nothing extra."""
    if hasattr(result, "http_response") and callable(getattr(result, "parse", None)):
        return result.parse()
    return result


def make_sync(tracer, endpoint: str, stream_types):
    def wrapper(wrapped, instance, args, kwargs):
        started = _start(tracer, endpoint, instance, kwargs)
        if started is None:
            return wrapped(*args, **kwargs)
        span, token, send = started
        try:
            result = wrapped(*args, **send)
        except BaseException as exc:
            otel_context.detach(token)
            record_error(span, exc)
            span.end()
            raise
        otel_context.detach(token)
        return _finish(endpoint, span, result, stream_types)
    return wrapper


def make_async(tracer, endpoint: str, stream_types):
    async def wrapper(wrapped, instance, args, kwargs):
        started = _start(tracer, endpoint, instance, kwargs)
        if started is None:
            return await wrapped(*args, **kwargs)
        span, token, send = started
        try:
            result = await wrapped(*args, **send)
        except BaseException as exc:
            otel_context.detach(token)
            record_error(span, exc)
            span.end()
            raise
        otel_context.detach(token)
        return _finish(endpoint, span, result, stream_types)
    return wrapper
