"""Errors the way OpenAI's API writes them, so that every OpenAI client understands them.

``{"error": {"message", "type", "param", "code"}}`` with the HTTP status the clients map to
their exception classes (400 BadRequestError, 401 AuthenticationError, 404 NotFoundError,
502/503/504 InternalServerError, retried by the client). Inside a stream whose status line has
already gone out, the same object is sent as a ``data:`` event, which the clients raise.
"""

from __future__ import annotations

import json

from aiohttp import web

INVALID_REQUEST = "invalid_request_error"
AUTHENTICATION = "authentication_error"
UPSTREAM = "upstream_error"
UNAVAILABLE = "service_unavailable"
SERVER = "server_error"


def payload(message: str, kind: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def response(status: int, message: str, kind: str, code: str | None = None,
             headers: dict | None = None) -> web.Response:
    return web.json_response(payload(message, kind, code), status=status, headers=headers)


def stream_event(message: str, kind: str = UPSTREAM, code: str | None = None) -> bytes:
    return b"data: " + json.dumps(payload(message, kind, code)).encode() + b"\n\n"


def for_http_exception(exc: web.HTTPException) -> web.Response:
    """aiohttp's own refusals (unknown path, wrong method, body too large) as OpenAI errors."""
    kind = AUTHENTICATION if exc.status == 401 else INVALID_REQUEST if exc.status < 500 else SERVER
    headers = {k: v for k, v in exc.headers.items() if k.lower() in ("allow", "retry-after")}
    return response(exc.status, exc.reason if exc.text is None else exc.text, kind, str(exc.status), headers)
