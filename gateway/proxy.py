"""Forwarding: one model call from the agent to an upstream and back, recorded on the way.

Model calls (``POST`` chat completions, completions, responses) are parsed, attributed to a
rollout, admitted by the pause gate, recorded as an LLM span and forwarded to the rollout's
upstream. A non-streamed reply is read whole, recorded and returned; a stream is passed through
piece by piece as it arrives, while complete events feed the span's accumulator. Everything
else under ``/v1`` (``/v1/models``...) is forwarded as it is, unrecorded.

Failures become OpenAI-style errors: an upstream that refuses the connection is skipped for the
next one (nothing ran there), and when none is left the call gets 502; silence beyond the read
timeout gets 504; an upstream error status is passed through with its own body. A stream that
breaks after its status line went out ends with an error event. A client that goes away ends
the upstream request too (vLLM then stops generating), and the span keeps what was delivered.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp
from aiohttp import web

from tracerl import semconv
from tracerl.instrumentations.openai.request import CHAT, COMPLETIONS, RESPONSES

from . import _json, capture, errors, sse
from .admission import Gate
from .config import GatewayConfig
from .recording import CallRecord
from .rollouts import BadKey, Rollouts, attribute
from .upstreams import Upstreams

logger = logging.getLogger("tracerl.gateway")

# path under /v1 -> the instrumentation's endpoint name
ENDPOINTS = {"chat/completions": CHAT, "completions": COMPLETIONS, "responses": RESPONSES}

_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                         "proxy-connection", "te", "trailer", "trailers", "transfer-encoding", "upgrade"})
# The gateway's own headers stay here; bodies travel uncompressed on this hop (aiohttp would
# decompress them anyway, and the upstream is usually on the same host or rack).
_NOT_FORWARDED = _HOP_BY_HOP | {"host", "content-length", "accept-encoding", semconv.HEADER_ROLLOUT,
                                "traceparent", "tracestate"}
_NOT_RETURNED = _HOP_BY_HOP | {"content-length", "content-encoding", "date", "server"}

# Errors meaning "nothing reached this upstream": safe to try the next one.
_UNREACHABLE = (aiohttp.ClientConnectorError, getattr(aiohttp, "ConnectionTimeoutError", aiohttp.ClientConnectorError))


class ClientGone(Exception):
    """The agent closed its connection while the gateway was writing to it."""


def request_headers(headers) -> dict:
    out = {k: v for k, v in headers.items() if k.lower() not in _NOT_FORWARDED}
    out["Accept-Encoding"] = "identity"
    return out


def reply_headers(resp: aiohttp.ClientResponse) -> dict:
    return {k: v for k, v in resp.headers.items() if k.lower() not in _NOT_RETURNED}


class Proxy:
    def __init__(self, config: GatewayConfig, upstreams: Upstreams, gate: Gate, rollouts: Rollouts, tracer):
        self.config, self.upstreams, self.gate, self.rollouts, self.tracer = config, upstreams, gate, rollouts, tracer
        self.session: aiohttp.ClientSession | None = None

    def open_session(self) -> None:
        """Called on the event loop at start-up. Pooled connections are dropped after 4 s idle,
        before a uvicorn-served upstream (vLLM) closes them at 5 s, so a reused connection is
        never one the server is closing."""
        timeout = aiohttp.ClientTimeout(total=None, connect=self.config.connect_timeout_s,
                                        sock_read=self.config.upstream_timeout_s)
        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=4.0)
        self.session = aiohttp.ClientSession(timeout=timeout, connector=connector)

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()

    # --- routes ---
    async def handle(self, request: web.Request) -> web.StreamResponse:
        tail = request.match_info["tail"]
        path_key = request.match_info.get("key")
        endpoint = ENDPOINTS.get(tail.rstrip("/")) if request.method == "POST" else None
        if endpoint is None:
            return await self.passthrough(request, tail, path_key)
        return await self.model_call(request, endpoint, tail, path_key)

    async def model_call(self, request: web.Request, endpoint: str, tail: str, path_key: str | None):
        raw = await request.read()
        try:
            body = _json.loads(raw)
        except ValueError as exc:
            return errors.response(400, f"the request body is not valid JSON: {exc}", errors.INVALID_REQUEST,
                                   "invalid_json")
        if not isinstance(body, dict):
            return errors.response(400, "the request body must be a JSON object", errors.INVALID_REQUEST,
                                   "invalid_json")
        try:
            where = attribute(path_key, request.headers, self.rollouts)
        except BadKey as exc:
            return errors.response(400, str(exc), errors.INVALID_REQUEST, "invalid_rollout_key")
        if not await self.gate.enter():
            return errors.response(503, "the gateway is paused for a weight update; retry later",
                                   errors.UNAVAILABLE, "paused", {"Retry-After": str(self.config.retry_after_s)})
        rollout = where.rollout
        if rollout is not None:
            rollout.call_started()
        ranked = self.upstreams.ranked(where.sticky_key)
        record = CallRecord(self.tracer, endpoint, body, ranked[0], where.parent)
        try:
            added = capture.inject(endpoint, body) if self.config.capture_tokens else frozenset()
            data = _json.dumps(body) if added else raw
            try:
                resp = await self._send(request, "/v1/" + tail, data, ranked, record)
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                record.failed(exc)
                return self._failure(exc)
            try:
                if body.get("stream") is True and resp.status == 200 and resp.content_type == "text/event-stream":
                    return await self._stream(request, resp, record, added)
                return await self._whole(resp, record, added)
            finally:
                resp.release()
        finally:
            record.end()
            if rollout is not None:
                rollout.call_ended()
            self.gate.leave()

    async def passthrough(self, request: web.Request, tail: str, path_key: str | None) -> web.Response:
        data = await request.read() if request.body_exists else None
        ranked = self.upstreams.ranked(path_key or request.headers.get(semconv.HEADER_ROLLOUT))
        try:
            resp = await self._send(request, "/v1/" + tail, data, ranked, None)
            async with resp:
                payload = await resp.read()
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            return self._failure(exc)
        return web.Response(status=resp.status, body=payload, headers=reply_headers(resp))

    # --- upstream side ---
    async def _send(self, request: web.Request, path: str, data, ranked, record) -> aiohttp.ClientResponse:
        """The response (status and headers read) of the first upstream that takes the call."""
        path_qs = path + (f"?{request.query_string}" if request.query_string else "")
        headers = request_headers(request.headers)
        error = None
        for i, upstream in enumerate(ranked):
            try:
                resp = await self.session.request(request.method, upstream.target(path_qs), data=data,
                                                  headers=headers, allow_redirects=False)
            except _UNREACHABLE as exc:
                logger.warning("upstream %s unreachable: %s", upstream.url, exc)
                error = exc
                continue
            upstream.calls += 1
            if i and record is not None:
                record.upstream(upstream)
            return resp
        raise error

    def _failure(self, exc: BaseException) -> web.Response:
        status, message, code = self._explain(exc)
        return errors.response(status, message, errors.UPSTREAM, code)

    def _explain(self, exc: BaseException) -> tuple[int, str, str]:
        """(status, message, code) for an upstream failure: 504 for silence, else 502."""
        if isinstance(exc, asyncio.TimeoutError):
            return (504, f"the upstream did not answer within {self.config.upstream_timeout_s:g}s "
                         f"({type(exc).__name__})", "upstream_timeout")
        if isinstance(exc, _UNREACHABLE):
            return 502, f"no upstream accepted the connection: {exc}", "upstream_unreachable"
        return 502, f"the upstream failed: {type(exc).__name__}: {exc}", "upstream_failed"

    async def _whole(self, resp: aiohttp.ClientResponse, record: CallRecord, added: frozenset) -> web.Response:
        try:
            payload = await resp.read()
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            record.failed(exc)
            return self._failure(exc)
        if resp.status >= 400:
            record.http_error(resp.status, payload.decode("utf-8", "replace"))
        elif resp.content_type == "application/json":
            try:
                reply = _json.loads(payload)
            except ValueError:
                reply = None
            if isinstance(reply, dict):
                record.reply(reply)
                if added:
                    capture.hide(reply, added)
                    payload = _json.dumps(reply)
        return web.Response(status=resp.status, body=payload, headers=reply_headers(resp))

    async def _stream(self, request: web.Request, resp: aiohttp.ClientResponse, record: CallRecord,
                      added: frozenset) -> web.StreamResponse:
        out = web.StreamResponse(status=resp.status, headers=reply_headers(resp))
        await out.prepare(request)
        splitter = sse.EventSplitter()
        try:
            async for piece in resp.content.iter_any():
                if not added:  # nothing to hide: forward the bytes before looking at them
                    await _write(out, piece)
                    for event in splitter.feed(piece):
                        _record_event(event, record, added)
                else:  # the events completed by this piece, rewritten, in one write
                    await _write(out, b"".join([_record_event(e, record, added) for e in splitter.feed(piece)]))
            if added:
                await _write(out, splitter.rest())
        except ClientGone:
            return out  # the span ends with what was delivered; releasing the response drops the upstream call
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            record.failed(exc)
            _, message, code = self._explain(exc)
            await _try_write(out, errors.stream_event(message, errors.UPSTREAM, code))
        except Exception as exc:  # a gateway bug must not leave the agent hanging on a half stream
            logger.exception("gateway bug while streaming")
            record.failed(exc)
            await _try_write(out, errors.stream_event("internal gateway error (logged)", errors.SERVER))
        try:
            await out.write_eof()
        except (ConnectionError, RuntimeError):
            pass
        return out


def _record_event(event: bytes, record: CallRecord, added: frozenset) -> bytes:
    """Feed one SSE event to the span; returns the event to send when token fields must be
    hidden (else the event as it was)."""
    data = sse.data_of(event)
    if not data or data == sse.DONE:
        return event
    try:
        chunk = _json.loads(data)
    except ValueError:
        return event
    if not isinstance(chunk, dict):
        return event
    record.chunk(chunk)
    if not added:
        return event
    capture.hide(chunk, added)
    return sse.with_data(event, _json.dumps(chunk))


async def _write(out: web.StreamResponse, data: bytes) -> None:
    if not data:
        return
    try:
        await out.write(data)
    except (ConnectionError, RuntimeError) as exc:  # ConnectionResetError; RuntimeError: transport closed
        raise ClientGone() from exc


async def _try_write(out: web.StreamResponse, data: bytes) -> None:
    try:
        await out.write(data)
    except (ConnectionError, RuntimeError):
        pass
