"""The gateway as an aiohttp application: routes, shared state, start-up and shutdown.

aiohttp serves and forwards on one event loop with a C HTTP parser on both sides, and streams
a response while the upstream is still producing it, which is what a proxy on the hot path of
every model call needs. Spans go to whatever tracer provider is given (by default the global
one, which `tracerl gateway` builds with the SDK's OTLP exporter).
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from opentelemetry import trace

from tracerl import __version__, semconv

from . import errors
from .admin import Admin
from .admission import Gate
from .config import GatewayConfig
from .proxy import Proxy
from .rollouts import Rollouts
from .upstreams import Upstreams

logger = logging.getLogger("tracerl.gateway")

FLUSH_TIMEOUT_MS = 10_000


class Gateway:
    """Everything the handlers share; one per application."""

    def __init__(self, config: GatewayConfig, tracer_provider=None):
        self.config = config
        self.provider = tracer_provider or trace.get_tracer_provider()
        self.tracer = trace.get_tracer(semconv.SCOPE_GATEWAY, __version__, tracer_provider=self.provider)
        self.upstreams = Upstreams(config.upstreams)
        self.gate = Gate(config.pause_timeout_s)
        self.rollouts = Rollouts(self.tracer, config.rollout_idle_s)
        self.proxy = Proxy(config, self.upstreams, self.gate, self.rollouts, self.tracer)
        self._reaper: asyncio.Task | None = None

    async def flush(self) -> bool:
        """Export the finished spans now (in a thread: the exporter blocks)."""
        force_flush = getattr(self.provider, "force_flush", None)
        if force_flush is None:
            return False
        return bool(await asyncio.get_running_loop().run_in_executor(None, force_flush, FLUSH_TIMEOUT_MS))

    async def start(self, app: web.Application) -> None:
        self.proxy.open_session()
        if self.config.rollout_idle_s > 0:
            self._reaper = asyncio.create_task(self._reap_idle())

    async def stop(self, app: web.Application) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        self.rollouts.end_all()  # their spans go out with the provider's final flush
        await self.proxy.close()

    async def _reap_idle(self) -> None:
        interval = max(1.0, min(30.0, self.config.rollout_idle_s / 4))
        while True:
            await asyncio.sleep(interval)
            for key in self.rollouts.idle_keys():
                logger.info("ending rollout %s: idle for %gs", key, self.config.rollout_idle_s)
                await self.rollouts.end(key, 0)


GATEWAY = web.AppKey("gateway", Gateway)


@web.middleware
async def openai_errors(request: web.Request, handler):
    """Every refusal as an OpenAI-style JSON error, and no request that can bring the gateway
    down: an unexpected exception is logged and answered 500."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        if exc.status == 404 and exc.text and exc.text.startswith("404"):
            exc.text = f"no route for {request.method} {request.path}"
        return errors.for_http_exception(exc)
    except ConnectionError:  # the agent hung up while its request was being read: nobody to answer
        logger.debug("client gone during %s %s", request.method, request.path)
        return errors.response(400, "connection lost", errors.INVALID_REQUEST, "connection_lost")
    except Exception:
        logger.exception("gateway error on %s %s", request.method, request.path)
        return errors.response(500, "internal gateway error (logged)", errors.SERVER, "gateway_error")


async def health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


def create_app(config: GatewayConfig, tracer_provider=None) -> web.Application:
    gateway = Gateway(config, tracer_provider)
    app = web.Application(client_max_size=config.max_body_bytes, middlewares=[openai_errors])
    app[GATEWAY] = gateway
    app.on_startup.append(gateway.start)
    app.on_cleanup.append(gateway.stop)
    app.router.add_get("/health", health)
    app.router.add_routes(Admin(gateway).routes())
    app.router.add_route("*", "/v1/{tail:.*}", gateway.proxy.handle)
    app.router.add_route("*", "/rollout/{key}/v1/{tail:.*}", gateway.proxy.handle)
    return app
