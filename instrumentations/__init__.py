"""tracerl's instrumentors, one subpackage per library: the OpenAI client (``openai``) and the
agent frameworks built on it (``langchain``, ``autogen``, ``openai_agents``).

Each is an OpenTelemetry ``BaseInstrumentor`` registered as an ``opentelemetry_instrumentor``
entry point whose name starts with ``tracerl_`` (so it never clashes with the many packages that
register plain ``openai``). ``opentelemetry-instrument`` loads them through that entry point;
``tracerl.init()`` activates every ``tracerl_*`` entry point whose library is installed.
`REGISTRY` repeats the entry points for a source tree run without installed metadata: a new
plugin adds one line here and one in pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import logging

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

REGISTRY: dict[str, str] = {
    "tracerl_openai": "tracerl.instrumentations.openai:OpenAIInstrumentor",
    "tracerl_langchain": "tracerl.instrumentations.langchain:LangChainInstrumentor",
    "tracerl_autogen": "tracerl.instrumentations.autogen:AutoGenInstrumentor",
    "tracerl_openai_agents": "tracerl.instrumentations.openai_agents:OpenAIAgentsInstrumentor",
}

logger = logging.getLogger("tracerl.instrumentations")


class TracerlInstrumentor(BaseInstrumentor):
    """Base of tracerl's instrumentors: knows its library's import name, so activation can skip
    libraries that are not installed without importing anything."""

    library: str = ""

    @classmethod
    def library_installed(cls) -> bool:
        try:
            return importlib.util.find_spec(cls.library) is not None
        except (ImportError, ValueError):
            return False


class OnceLogger:
    """Logs an instrumentation bug once per place, with its traceback, then stays quiet: a bug
    on a hot path must not flood the agent's log (nor ever raise into it)."""

    def __init__(self, log: logging.Logger):
        self.log = log
        self.seen: set[str] = set()

    def __call__(self, where: str) -> None:
        if where not in self.seen:
            self.seen.add(where)
            self.log.warning("tracerl instrumentation error in %s (call unaffected)", where, exc_info=True)
