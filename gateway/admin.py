"""The trainer's side of the gateway: pause / resume, rollouts, rewards, flush.

- ``POST /admin/pause`` (``{"wait": true, "timeout": 60}`` to return only once the calls in
  flight have finished), ``POST /admin/resume``, ``GET /admin/status``.
- ``POST /admin/rollouts`` ``{"key"?, "task_id"?, "task"?, "group_id"?, "attempt"?, "mode"?,
  "policy_version"?}`` opens a rollout (its ``tracerl.rollout`` root span) and answers its
  ``base_url`` (``.../rollout/<key>/v1``, for the agent's ``OPENAI_BASE_URL``), ``trace_id``
  and ``traceparent``. ``GET /admin/rollouts`` lists the open ones.
- ``POST /admin/rollouts/<key>/reward`` ``{"value", "name"?, "components"?}``: a reward span.
- ``POST /admin/rollouts/<key>/end`` (optionally with a final ``reward`` and ``components``):
  waits for the rollout's calls in flight, ends its root span and flushes the spans to the
  collector, so that when it answers, the rollout is in the store and can be built.
- ``POST /admin/flush``: export every finished span now.

With a token configured (``--token`` / ``TRACERL_TOKEN``), each needs ``Authorization: Bearer
<token>``, as the collector's receivers do.
"""

from __future__ import annotations

import hmac
import json

from aiohttp import web

from tracerl import semconv
from tracerl.scopes import reward_attributes, rollout_attributes

from . import errors
from .rollouts import BadKey, check_key, new_key


class Admin:
    def __init__(self, gateway):
        self.gw = gateway

    def routes(self) -> list:
        guard = self._guarded
        return [
            web.post("/admin/pause", guard(self.pause)),
            web.post("/admin/resume", guard(self.resume)),
            web.get("/admin/status", guard(self.status)),
            web.post("/admin/flush", guard(self.flush)),
            web.post("/admin/rollouts", guard(self.open_rollout)),
            web.get("/admin/rollouts", guard(self.list_rollouts)),
            web.post("/admin/rollouts/{key}/reward", guard(self.reward)),
            web.post("/admin/rollouts/{key}/end", guard(self.end_rollout)),
        ]

    def _guarded(self, handler):
        token = self.gw.config.token

        async def guarded(request: web.Request) -> web.StreamResponse:
            if token and not hmac.compare_digest(request.headers.get("Authorization", ""), f"Bearer {token}"):
                return errors.response(401, "missing or wrong bearer token for /admin", errors.AUTHENTICATION,
                                       "invalid_token")
            try:
                return await handler(request)
            except BadRequest as exc:
                return errors.response(400, str(exc), errors.INVALID_REQUEST, "invalid_request")
        return guarded

    # --- pause / resume ---
    async def pause(self, request: web.Request) -> web.Response:
        args = await _json_args(request)
        gate = self.gw.gate
        gate.pause()
        out = gate.status()
        if _truthy(args.get("wait")):
            out["drained"] = await gate.drained(_number(args.get("timeout", 60.0), "timeout"))
            out.update(in_flight=gate.in_flight, waiting=gate.waiting)
        return web.json_response(out)

    async def resume(self, request: web.Request) -> web.Response:
        self.gw.gate.resume()
        return web.json_response(self.gw.gate.status())

    async def status(self, request: web.Request) -> web.Response:
        out = self.gw.gate.status()
        out["rollouts_open"] = len(self.gw.rollouts.open_rollouts)
        out["upstreams"] = [{"url": u.url, "calls": u.calls} for u in self.gw.upstreams.all]
        return web.json_response(out)

    async def flush(self, request: web.Request) -> web.Response:
        return web.json_response({"flushed": await self.gw.flush()})

    # --- rollouts ---
    async def open_rollout(self, request: web.Request) -> web.Response:
        args = await _json_args(request)
        try:
            key = check_key(str(args["key"])) if args.get("key") is not None else new_key()
            attrs = rollout_attributes(args.get("task_id"), args.get("task"), args.get("group_id"),
                                       int(args.get("attempt", 0)), str(args.get("mode", "train")))
        except (BadKey, ValueError, TypeError) as exc:
            raise BadRequest(str(exc)) from None
        if args.get("policy_version") is not None:
            attrs[semconv.POLICY_VERSION] = str(args["policy_version"])
        try:
            rollout = self.gw.rollouts.open(key, attrs)
        except KeyError:
            return errors.response(409, f"rollout {key!r} is already open", errors.INVALID_REQUEST, "rollout_exists")
        out = rollout.describe()
        out["base_url"] = f"{request.scheme}://{request.host}/rollout/{key}/v1"
        out["headers"] = {semconv.HEADER_ROLLOUT: key}
        return web.json_response(out, status=201)

    async def list_rollouts(self, request: web.Request) -> web.Response:
        return web.json_response([r.describe() for r in self.gw.rollouts.open_rollouts.values()])

    async def reward(self, request: web.Request) -> web.Response:
        rollout = self._open(request)
        args = await _json_args(request)
        if "value" not in args:
            raise BadRequest("a reward needs a 'value'")
        self.gw.rollouts.reward(rollout, _reward(args["value"], args.get("name", semconv.REWARD_PRIMARY),
                                                 args.get("components")))
        return web.json_response({"key": rollout.key, "trace_id": rollout.trace_id})

    async def end_rollout(self, request: web.Request) -> web.Response:
        rollout = self._open(request)
        args = await _json_args(request)
        if args.get("reward") is not None:
            self.gw.rollouts.reward(rollout, _reward(args["reward"], semconv.REWARD_PRIMARY, args.get("components")))
        await self.gw.rollouts.end(rollout.key, self.gw.config.end_wait_s)
        out = rollout.describe()
        if args.get("flush", True):
            out["flushed"] = await self.gw.flush()
        return web.json_response(out)

    def _open(self, request: web.Request):
        key = request.match_info["key"]
        rollout = self.gw.rollouts.open_rollouts.get(key)
        if rollout is None:
            raise web.HTTPNotFound(text=f"no open rollout {key!r}")
        return rollout


class BadRequest(ValueError):
    pass


async def _json_args(request: web.Request) -> dict:
    """The JSON object in the body (empty body: ``{}``), with query parameters as defaults."""
    args = dict(request.query)
    raw = await request.read()
    if raw.strip():
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise BadRequest(f"the request body is not valid JSON: {exc}") from None
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object")
        args.update(body)
    return args


def _reward(value, name, components) -> dict:
    if components is not None and not isinstance(components, dict):
        raise BadRequest("'components' must be an object of numbers")
    try:
        return reward_attributes(value, str(name), components)
    except TypeError as exc:
        raise BadRequest(str(exc)) from None


def _number(value, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{what} must be a number") from None


def _truthy(value) -> bool:
    return value is True or str(value).lower() in ("1", "true", "yes")
