"""OpenTelemetry instrumentation of AutoGen AgentChat, for training.

AutoGen (autogen-core >= 0.7) already writes OpenTelemetry spans through the global tracer
provider: ``invoke_agent <name>`` around each agent's turn (``run``, ``run_stream`` and inside
teams) and ``execute_tool <name>`` around each tool call, with ``gen_ai.agent.name`` and
``gen_ai.tool.name``. It records no model call; AutoGen's OpenAI client calls the ``openai``
package inside the agent span, so tracerl's OpenAI-client instrumentation records each call,
with token ids, as a child of the agent that made it. There is no second record of a call to
reconcile.

This plugin builds on those spans and adds what training needs and AutoGen leaves out:
the tool call's arguments and result on its ``execute_tool`` span (`tools.traced_run`), and
the agent's input messages and final answer as ``tracerl.variable`` events on its
``invoke_agent`` span (`agents.traced_stream`). Entry point: ``tracerl_autogen``.
"""

from __future__ import annotations

from typing import Collection

from opentelemetry.instrumentation.utils import unwrap
from wrapt import wrap_function_wrapper

from .. import TracerlInstrumentor

_instruments = ("autogen-agentchat >= 0.7",)

# (module, attribute path, wrapper factory name)
_TOOL_RUN = ("autogen_core.tools._function_tool", "FunctionTool.run")
_AGENT_STREAM = ("autogen_agentchat.agents._assistant_agent", "AssistantAgent.on_messages_stream")


class AutoGenInstrumentor(TracerlInstrumentor):
    library = "autogen_agentchat"

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs):
        import autogen_agentchat  # noqa: F401  (ModuleNotFoundError: opentelemetry-instrument skips us)

        from .agents import traced_stream
        from .tools import traced_run

        wrap_function_wrapper(*_TOOL_RUN, traced_run)
        wrap_function_wrapper(*_AGENT_STREAM, traced_stream)

    def _uninstrument(self, **kwargs):
        from autogen_agentchat.agents._assistant_agent import AssistantAgent
        from autogen_core.tools._function_tool import FunctionTool

        unwrap(FunctionTool, "run")
        unwrap(AssistantAgent, "on_messages_stream")
