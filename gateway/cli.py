"""`tracerl gateway`: run the OpenAI-compatible gateway in the foreground until SIGTERM or Ctrl-C."""

from __future__ import annotations

from typing import List, Optional

import typer

from .config import DEFAULT_LISTEN


def gateway(
    upstream: List[str] = typer.Option(..., "--upstream", help="OpenAI-compatible server to forward to, e.g. "
                                       "http://127.0.0.1:8000/v1; repeat for several (a rollout sticks to one)."),
    listen: str = typer.Option(DEFAULT_LISTEN, help="HOST:PORT to serve the OpenAI API on."),
    token: str = typer.Option("", envvar="TRACERL_TOKEN", help="Bearer token required by /admin/*."),
    capture_tokens: bool = typer.Option(False, "--capture-tokens", help="Ask the upstream for token ids and "
                                        "logprobs (vLLM >= 0.10.2 return_token_ids) and record them; the "
                                        "agent still gets a plain response."),
    otlp_endpoint: Optional[str] = typer.Option(None, help="Collector to export spans to (default: the "
                                                "OTEL_EXPORTER_OTLP_* variables, else localhost:4317)."),
    service_name: str = typer.Option("tracerl-gateway", envvar="OTEL_SERVICE_NAME",
                                     help="service.name of the gateway's spans."),
    upstream_timeout: float = typer.Option(600.0, help="Seconds of upstream silence before a 504."),
    connect_timeout: float = typer.Option(10.0, help="Seconds to connect to an upstream."),
    pause_timeout: float = typer.Option(60.0, help="Seconds a new call waits while paused before a 503."),
    rollout_idle: float = typer.Option(900.0, help="End an open rollout after this many idle seconds (0: never)."),
    max_body_mb: float = typer.Option(64.0, help="Largest accepted request body, in MiB."),
    log_level: str = typer.Option("INFO", help="Python log level."),
) -> None:
    """Forward OpenAI API calls to model servers and record each call as spans (for agents that
    cannot be instrumented: point their OpenAI base URL here).

    Rollouts: /rollout/<key>/v1/... as base URL, an x-tracerl-rollout header, or a traceparent
    header. Admin (for the trainer): /admin/pause, /admin/resume, /admin/rollouts, /admin/status.
    """
    import logging
    import os

    from tracerl._net import is_loopback, split_hostport

    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        from aiohttp import web
    except ImportError:
        typer.echo("tracerl gateway needs aiohttp: pip install 'tracerl[gateway]'", err=True)
        raise typer.Exit(2) from None
    from opentelemetry import trace
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    from tracerl import setup

    from .app import create_app
    from .config import GatewayConfig
    from .upstreams import Upstreams

    try:
        host, port = split_hostport(listen, "--listen")
        config = GatewayConfig(upstreams=list(upstream), host=host, port=port, token=token,
                               capture_tokens=capture_tokens, upstream_timeout_s=upstream_timeout,
                               connect_timeout_s=connect_timeout, pause_timeout_s=pause_timeout,
                               rollout_idle_s=rollout_idle, max_body_bytes=int(max_body_mb * (1 << 20)))
        Upstreams(config.upstreams)  # a bad URL stops here, before anything starts
    except ValueError as exc:
        typer.echo(f"tracerl gateway: {exc}", err=True)
        raise typer.Exit(2) from None
    if not token and not is_loopback(host):
        logging.getLogger("tracerl.gateway").warning(
            "listening beyond loopback on %s without a token: anyone who can reach it can pause the gateway "
            "and open rollouts (set --token or TRACERL_TOKEN)", listen)
    # The gateway serves many rollouts, so the variables that make a whole process one rollout
    # (TRACEPARENT) do not apply to it; its traces come from each call's attribution.
    for name in ("TRACEPARENT", "TRACESTATE"):
        os.environ.pop(name, None)
    setup.configure_sdk(endpoint=otlp_endpoint, service_name=service_name, id_generator=RandomIdGenerator(),
                        trace_exporter_names=None if os.environ.get("OTEL_TRACES_EXPORTER") else ["otlp"])
    app = create_app(config)  # after the SDK: the app flushes the provider it finds
    typer.echo(f"tracerl gateway: http://{host}:{port}/v1 -> {', '.join(upstream)}"
               f"{' (capturing token ids)' if capture_tokens else ''}", err=True)
    try:
        web.run_app(app, host=host, port=port, print=None, access_log=None)
    except OSError as exc:
        typer.echo(f"tracerl gateway: {exc}", err=True)
        raise typer.Exit(2) from None
    finally:
        provider = trace.get_tracer_provider()
        if hasattr(provider, "shutdown"):
            provider.shutdown()  # exports the spans of the rollouts ended at shutdown
    typer.echo("tracerl gateway: stopped", err=True)
