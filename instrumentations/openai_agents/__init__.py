"""OpenTelemetry instrumentation of the OpenAI Agents SDK, for training.

The SDK traces through its own ``TracingProcessor``s, outside OpenTelemetry's context. This
instrumentor registers `processor.OpenTelemetryProcessor`, which mirrors every SDK trace and
span into OpenTelemetry and makes each current while it runs, so the OpenAI-client spans (with
token ids) land under the agent that made the call, handoffs included, in one trace per run.
Entry point: ``tracerl_openai_agents``.

By default the mirror *replaces* the SDK's processors: the default one uploads traces to
OpenAI's trace backend, which an agent served by vLLM or another OpenAI-compatible server has
no use for (and may have no route to). ``TRACERL_OPENAI_AGENTS_KEEP_PROCESSORS=1`` (or
``instrument(keep_processors=True)``) adds the mirror beside them instead.
"""

from __future__ import annotations

import importlib.metadata
import os
from typing import Collection

from opentelemetry import trace

from tracerl import __version__, semconv

from .. import TracerlInstrumentor

_instruments = ("openai-agents >= 0.2",)


class OpenAIAgentsInstrumentor(TracerlInstrumentor):
    library = "agents"

    @classmethod
    def library_installed(cls) -> bool:
        """The import name ``agents`` is generic: the distribution must be there too."""
        try:
            importlib.metadata.distribution("openai-agents")
        except importlib.metadata.PackageNotFoundError:
            return False
        return super().library_installed()

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs):
        from agents.tracing import add_trace_processor, set_trace_processors

        from .processor import OpenTelemetryProcessor

        tracer = trace.get_tracer(semconv.SCOPE_OPENAI_AGENTS, __version__,
                                  tracer_provider=kwargs.get("tracer_provider"))
        self.processor = OpenTelemetryProcessor(tracer)
        keep = kwargs.get("keep_processors")
        if keep is None:
            keep = os.environ.get(semconv.ENV_OPENAI_AGENTS_KEEP_PROCESSORS, "").strip().lower() in ("1", "true")
        self.kept = bool(keep)
        if self.kept:
            add_trace_processor(self.processor)
        else:
            set_trace_processors([self.processor])

    def _uninstrument(self, **kwargs):
        from agents.tracing import set_trace_processors
        from agents.tracing.processors import default_processor

        set_trace_processors([default_processor()])
        self.processor = None
