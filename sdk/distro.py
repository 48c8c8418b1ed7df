"""tracerl as an OpenTelemetry distro: ``opentelemetry-instrument python agent.py``.

``opentelemetry-instrument`` loads, in order, one ``opentelemetry_distro`` (defaults for the
environment), one ``opentelemetry_configurator`` (builds the SDK), every
``opentelemetry_instrumentor`` and every ``opentelemetry_post_instrument`` hook. tracerl
registers one of each (entry points ``tracerl`` and ``tracerl_openai``, see pyproject.toml).

When other distros or configurators are installed too, ``OTEL_PYTHON_DISTRO=tracerl`` and
``OTEL_PYTHON_CONFIGURATOR=tracerl`` pick tracerl's; and should another configurator win
anyway, the post-instrument hook still adds tracerl's redaction and rollout identity to the
provider it built.
"""

from __future__ import annotations

import logging
import os

from opentelemetry import trace
from opentelemetry.instrumentation.distro import BaseDistro
from opentelemetry.sdk._configuration import _OTelSDKConfigurator

from . import setup

logger = logging.getLogger("tracerl")

# Defaults only: a variable already set in the environment always wins.
ENV_DEFAULTS = {
    "OTEL_TRACES_EXPORTER": "otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",  # the exporter's default endpoint is localhost:4317
    "OTEL_METRICS_EXPORTER": "none",  # the tracerl collector receives traces only
    "OTEL_LOGS_EXPORTER": "none",
}


class TracerlDistro(BaseDistro):
    """Sets tracerl's environment defaults; instrumentors load as the base distro loads them."""

    def _configure(self, **kwargs):
        for key, value in ENV_DEFAULTS.items():
            os.environ.setdefault(key, value)


class TracerlConfigurator(_OTelSDKConfigurator):
    """The SDK's configurator plus tracerl's exporter wrappers and rollout identity."""

    def _configure(self, **kwargs):
        if os.environ.get("OTEL_CONFIG_FILE"):
            super()._configure(**kwargs)
            setup.adopt_provider(trace.get_tracer_provider())
            return
        setup.configure_sdk(**kwargs)


def post_instrument() -> None:
    """After all instrumentors: make sure tracerl's pieces are on whichever provider exists.

    Never raises, since it runs inside the agent's start-up."""
    try:
        if not setup.is_configured():
            provider = trace.get_tracer_provider()
            if not isinstance(provider, trace.ProxyTracerProvider):
                setup.adopt_provider(provider)
    except Exception:
        logger.exception("tracerl post-instrument hook failed")
