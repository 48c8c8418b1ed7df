"""OpenTelemetry instrumentation of the ``openai`` Python client, for training.

The client is where LangChain's ChatOpenAI, AutoGen's OpenAI client and the OpenAI Agents SDK
send their model calls, so this one instrumentor sees every policy call. It wraps ``create`` of
chat completions, completions and responses, sync and async, streaming or not, and records the
GenAI attributes plus the token ids and logprobs a vLLM-style server returns
(``tracerl.llm.*``). Entry point: ``tracerl_openai`` (group ``opentelemetry_instrumentor``).

    from tracerl.instrumentations.openai import OpenAIInstrumentor
    OpenAIInstrumentor().instrument(tracer_provider=provider)
"""

from __future__ import annotations

from typing import Collection

from opentelemetry import trace
from opentelemetry.instrumentation.utils import unwrap
from wrapt import wrap_function_wrapper

from tracerl import __version__, semconv

from .. import TracerlInstrumentor
from .wrappers import make_async, make_sync

_instruments = ("openai >= 1.40",)

# (module, class, endpoint, is_async)
TARGETS = (
    ("openai.resources.chat.completions", "Completions", "chat", False),
    ("openai.resources.chat.completions", "AsyncCompletions", "chat", True),
    ("openai.resources.completions", "Completions", "completions", False),
    ("openai.resources.completions", "AsyncCompletions", "completions", True),
    ("openai.resources.responses", "Responses", "responses", False),
    ("openai.resources.responses", "AsyncResponses", "responses", True),
)


class OpenAIInstrumentor(TracerlInstrumentor):
    library = "openai"

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs):
        import openai

        tracer = trace.get_tracer(semconv.SCOPE_OPENAI, __version__,
                                  tracer_provider=kwargs.get("tracer_provider"))
        stream_types = (getattr(openai, "Stream", None), getattr(openai, "AsyncStream", None))
        self._wrapped = []
        for module, cls, endpoint, is_async in TARGETS:
            make = make_async if is_async else make_sync
            try:
                wrap_function_wrapper(module, f"{cls}.create", make(tracer, endpoint, stream_types))
                self._wrapped.append((module, cls))
            except (ImportError, AttributeError):  # an older client without this endpoint
                continue

    def _uninstrument(self, **kwargs):
        import importlib

        for module, cls in getattr(self, "_wrapped", ()):
            unwrap(getattr(importlib.import_module(module), cls), "create")
        self._wrapped = []
