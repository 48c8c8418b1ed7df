"""The framework plugins are optional: tracerl.init() activates the ones whose framework is
importable and passes over the others without a word."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    for name in {hidden!r}:
        sys.modules[name] = None  # as if not installed: importing it raises ModuleNotFoundError
    import logging
    logging.basicConfig(level=logging.WARNING)
    import tracerl
    tracerl.init(endpoint="127.0.0.1:9")
    from tracerl.instrumentations.autogen import AutoGenInstrumentor
    from tracerl.instrumentations.langchain import LangChainInstrumentor
    from tracerl.instrumentations.openai import OpenAIInstrumentor
    from tracerl.instrumentations.openai_agents import OpenAIAgentsInstrumentor
    for cls in (OpenAIInstrumentor, LangChainInstrumentor, AutoGenInstrumentor, OpenAIAgentsInstrumentor):
        print(cls.__name__, cls().is_instrumented_by_opentelemetry)
""")


def _run(hidden: tuple) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT.format(hidden=hidden)], capture_output=True, text=True,
                          timeout=60)


def test_missing_frameworks_are_skipped_silently():
    proc = _run(("langchain_core", "autogen_agentchat", "agents"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["OpenAIInstrumentor", "True", "LangChainInstrumentor", "False",
                                   "AutoGenInstrumentor", "False", "OpenAIAgentsInstrumentor", "False"]
    assert "tracerl" not in proc.stderr, proc.stderr


def test_installed_frameworks_are_activated_by_init():
    proc = _run(())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[1::2] == ["True"] * 4
    assert "tracerl" not in proc.stderr, proc.stderr
