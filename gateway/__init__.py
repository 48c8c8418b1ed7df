"""The gateway: an OpenAI-compatible proxy that records every model call as spans.

For agents that cannot be instrumented (another language, a closed CLI harness, a sandbox), the
zero-code path is to point their OpenAI base URL at ``tracerl gateway``. It forwards each call to
the real model server and records it in exactly the shape the OpenAI-client instrumentation
produces (it uses that instrumentation's attribute builders), so the transition builder needs no
special case. Rollouts are told apart by a path prefix (``/rollout/<key>/v1/...``), the
``x-tracerl-rollout`` header or the W3C ``traceparent`` header.

Modules: `config`, `upstreams` (sticky choice), `admission` (pause / resume), `rollouts`
(attribution and root spans), `capture` (token ids asked for and hidden again), `sse` (event
splitting), `_json` (the hot path's JSON), `recording` (the LLM span), `proxy` (forwarding),
`admin`, `errors`, `app`, `cli`.

Importing this package loads nothing heavy: the HTTP stack (aiohttp and orjson, the ``[gateway]``
extra) is imported by `app`, which the command loads when it runs.
"""

__all__ = ["GatewayConfig", "create_app"]


def __getattr__(name):
    if name == "create_app":
        from .app import create_app

        return create_app
    if name == "GatewayConfig":
        from .config import GatewayConfig

        return GatewayConfig
    raise AttributeError(name)
