"""OpenTelemetry instrumentation of LangChain and LangGraph, for training.

LangChain traces through callbacks, not OpenTelemetry. This instrumentor adds one tracerl
callback handler (`handler.TracerlCallbackHandler`) to every callback manager LangChain builds,
as an inheritable handler, so every run of every runnable reaches it without the agent passing
``callbacks=``. The handler turns LangGraph nodes and runnables marked as agents into
``invoke_agent`` spans, tools into ``execute_tool`` spans, and chat-model runs into the
framework's record of the model call, under which the OpenAI-client instrumentation records the
call itself with its token ids. Entry point: ``tracerl_langchain``.

    from tracerl.instrumentations.langchain import LangChainInstrumentor
    LangChainInstrumentor().instrument(tracer_provider=provider)
"""

from __future__ import annotations

from typing import Collection

from opentelemetry import trace
from opentelemetry.instrumentation.utils import unwrap
from wrapt import wrap_function_wrapper

from tracerl import __version__, semconv

from .. import TracerlInstrumentor

_instruments = ("langchain-core >= 0.3",)


class LangChainInstrumentor(TracerlInstrumentor):
    library = "langchain_core"

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs):
        from .handler import TracerlCallbackHandler

        tracer = trace.get_tracer(semconv.SCOPE_LANGCHAIN, __version__,
                                  tracer_provider=kwargs.get("tracer_provider"))
        self.handler = TracerlCallbackHandler(tracer)
        wrap_function_wrapper("langchain_core.callbacks.base", "BaseCallbackManager.__init__",
                              _AddHandler(self.handler))

    def _uninstrument(self, **kwargs):
        from langchain_core.callbacks.base import BaseCallbackManager

        unwrap(BaseCallbackManager, "__init__")
        self.handler = None


class _AddHandler:
    """Wrapper of ``BaseCallbackManager.__init__`` that adds tracerl's handler to each manager
    (``add_handler`` skips it when the manager already has it, e.g. a child copying its
    parent's inheritable handlers)."""

    def __init__(self, handler):
        self.handler = handler

    def __call__(self, wrapped, instance, args, kwargs):
        wrapped(*args, **kwargs)
        try:
            if not any(h is self.handler for h in instance.inheritable_handlers):
                instance.add_handler(self.handler, inherit=True)
        except Exception:  # never in the way of LangChain
            pass
