"""tracerl: train existing AI agents with reinforcement learning from their OpenTelemetry traces.

The agent side: ``tracerl.init()`` (or ``opentelemetry-instrument``), ``tracerl.rollout``,
``tracerl.emit_reward``, ``tracerl.emit_variable``, ``tracerl.agent``. Importing tracerl loads
only the OpenTelemetry API; the SDK is loaded by `init`.
"""

__version__ = "0.1.0"

__all__ = ["init", "rollout", "emit_reward", "emit_variable", "agent", "export_stats", "__version__"]


def init(endpoint=None, service_name=None, capture_tokens=None, redact=None):
    """See `tracerl.setup.init`."""
    from .setup import init as _init

    return _init(endpoint=endpoint, service_name=service_name, capture_tokens=capture_tokens, redact=redact)


def export_stats() -> dict:
    """Spans exported and dropped so far by tracerl's exporter in this process."""
    from .export import STATS

    return STATS.snapshot()


def __getattr__(name):
    # rollout helpers load lazily so that `import tracerl` stays cheap for the CLI and servers.
    if name in ("rollout", "emit_reward", "emit_variable", "agent"):
        from . import scopes as _module

        return getattr(_module, name)
    raise AttributeError(name)
