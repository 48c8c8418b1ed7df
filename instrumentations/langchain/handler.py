"""The LangChain callback handler that turns runs into tracerl's spans.

LangChain reports every run (chain, chat model, tool) to the callback handlers with its
``run_id`` and ``parent_run_id``. Only the runs training needs become spans:

- an *agent run* becomes an ``invoke_agent <name>`` span: a LangGraph node (the run whose name
  is its ``langgraph_node`` metadata), or any runnable given the metadata key ``tracerl.agent``
  (``True`` for its run name, or a string naming the agent). Nested runs inherit metadata, so a
  run opens a new agent only when its name differs from the agent it already runs in;
- a chat-model or LLM run becomes the framework's record of the model call (see the nesting
  rule in `tracerl.semconv`): it is made current, so the OpenAI-client span is its child, and it
  carries the same ``gen_ai.response.id``;
- a tool run becomes an ``execute_tool <name>`` span with its arguments and result.

Every other run (prompt templates, parsers, routing functions, LangGraph's internal writes) is
only remembered, so that the runs below it find their agent. Each span is attached to the
current OpenTelemetry context while its run is active, because that is where LangChain then
calls the model client; its parent is taken from the run tree (down from the context current
when the outermost run started), so the tree stays right even when a step ends in another
thread or task.

One exception to attaching: an agent run started on a running event loop. Async LangGraph
starts a node's run in the caller's task and ends it in another, so the span could never be
detached there and would stay current in the caller after the graph returned. Such agent spans
are parents by the run tree only; the model and tool runs inside still attach their own spans
(they start and end in one place), so their OpenAI-client spans still nest under them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from tracerl import semconv

from .. import OnceLogger
from .._context import attach, detach
from .._values import add_variable, as_text
from .values import chat_attributes, llm_result_attributes, plain

logger = logging.getLogger("tracerl.instrumentations.langchain")
log_bug = OnceLogger(logger)


@dataclass
class _Run:
    parent: "_Run | None"
    agent: str | None  # the agent this run belongs to (its own name when it opened the agent)
    ctx: Any = None  # the context current when the outermost run started: parent of last resort
    span: Any = None  # only for runs that became spans
    token: Any = None
    is_agent: bool = False

    def nearest_span(self):
        run = self
        while run is not None:
            if run.span is not None:
                return run.span
            run = run.parent
        return None


class TracerlCallbackHandler(BaseCallbackHandler):
    """One instance serves the whole process; runs are kept by id until they end."""

    run_inline = True  # called in the caller's context (async too), where the model call follows
    raise_error = False

    def __init__(self, tracer):
        super().__init__()
        self.tracer = tracer
        self._runs: dict[UUID, _Run] = {}
        self._lock = threading.Lock()

    # --- bookkeeping -------------------------------------------------------------------------
    def _parent(self, parent_run_id) -> "_Run | None":
        if parent_run_id is None:
            return None
        with self._lock:
            return self._runs.get(parent_run_id)

    def _plain(self, run_id, parent: "_Run | None", agent) -> _Run:
        """Remember a run that makes no span, so the runs below it find their agent and context."""
        return self._remember(run_id, _Run(parent, agent, _root_context(parent)))

    def _remember(self, run_id, run: _Run) -> _Run:
        with self._lock:
            self._runs[run_id] = run
        return run

    def _start(self, run_id, parent: "_Run | None", agent, name: str, attrs: dict, kind=SpanKind.INTERNAL,
               is_agent=False) -> _Run:
        root_ctx = _root_context(parent)
        above = parent.nearest_span() if parent is not None else None
        ctx = trace.set_span_in_context(above) if above is not None else root_ctx
        span = self.tracer.start_span(name, context=ctx, kind=kind, attributes=attrs)
        token = None if is_agent and _on_event_loop() else attach(span)
        return self._remember(run_id, _Run(parent, agent, root_ctx, span, token, is_agent))

    def _end(self, run_id, error: BaseException | None = None) -> "_Run | None":
        with self._lock:
            run = self._runs.pop(run_id, None)
        if run is None or run.span is None:
            return run
        if error is not None:
            run.span.record_exception(error)
            run.span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
            run.span.set_attribute(semconv.ERROR_TYPE, type(error).__name__)
        detach(run.token)
        run.span.end()
        return run

    # --- chains: agents ----------------------------------------------------------------------
    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, metadata=None,
                       **kwargs):
        try:
            parent = self._parent(parent_run_id)
            inherited = parent.agent if parent is not None else None
            name = agent_name(kwargs.get("name") or _serialized_name(serialized), tags or [], metadata or {})
            if name is None or name == inherited:
                self._plain(run_id, parent, inherited)
                return
            attrs = {semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT, semconv.GEN_AI_AGENT_NAME: name}
            run = self._start(run_id, parent, name, f"{semconv.OP_INVOKE_AGENT} {name}", attrs, is_agent=True)
            add_variable(run.span, semconv.VAR_AGENT_INPUT, plain(inputs))
        except Exception:
            log_bug("langchain on_chain_start")

    def on_chain_end(self, outputs, *, run_id, **kwargs):
        try:
            with self._lock:
                run = self._runs.get(run_id)
            if run is not None and run.is_agent:
                add_variable(run.span, semconv.VAR_AGENT_OUTPUT, plain(outputs))
            self._end(run_id)
        except Exception:
            log_bug("langchain on_chain_end")

    def on_chain_error(self, error, *, run_id, **kwargs):
        try:
            self._end(run_id, _real_error(error))
        except Exception:
            log_bug("langchain on_chain_error")

    # --- model calls -------------------------------------------------------------------------
    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, tags=None,
                            metadata=None, **kwargs):
        self._model_start(semconv.OP_CHAT, serialized, run_id, parent_run_id, metadata, kwargs)

    def on_llm_start(self, serialized, prompts, *, run_id, parent_run_id=None, tags=None, metadata=None,
                     **kwargs):
        self._model_start(semconv.OP_TEXT_COMPLETION, serialized, run_id, parent_run_id, metadata, kwargs)

    def _model_start(self, operation, serialized, run_id, parent_run_id, metadata, kwargs):
        try:
            parent = self._parent(parent_run_id)
            attrs = chat_attributes(operation, kwargs.get("invocation_params") or {}, metadata or {})
            model = attrs.get(semconv.GEN_AI_REQUEST_MODEL)
            name = f"{operation} {model}" if model else operation
            self._start(run_id, parent, parent.agent if parent else None, name, attrs)
        except Exception:
            log_bug("langchain model start")

    def on_llm_end(self, response, *, run_id, **kwargs):
        try:
            with self._lock:
                run = self._runs.get(run_id)
            if run is not None and run.span is not None:
                run.span.set_attributes(llm_result_attributes(response))
            self._end(run_id)
        except Exception:
            log_bug("langchain on_llm_end")

    def on_llm_error(self, error, *, run_id, **kwargs):
        try:
            self._end(run_id, _real_error(error))
        except Exception:
            log_bug("langchain on_llm_error")

    # --- tools -------------------------------------------------------------------------------
    def on_tool_start(self, serialized, input_str, *, run_id, parent_run_id=None, tags=None, metadata=None,
                      inputs=None, **kwargs):
        try:
            parent = self._parent(parent_run_id)
            name = kwargs.get("name") or _serialized_name(serialized) or "tool"
            attrs = {semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL, semconv.GEN_AI_TOOL_NAME: name,
                     semconv.GEN_AI_TOOL_CALL_ARGUMENTS: as_text(inputs if inputs is not None else input_str)}
            if kwargs.get("tool_call_id"):
                attrs[semconv.GEN_AI_TOOL_CALL_ID] = str(kwargs["tool_call_id"])
            self._start(run_id, parent, parent.agent if parent else None, f"{semconv.OP_EXECUTE_TOOL} {name}",
                        attrs)
        except Exception:
            log_bug("langchain on_tool_start")

    def on_tool_end(self, output, *, run_id, **kwargs):
        try:
            with self._lock:
                run = self._runs.get(run_id)
            if run is not None and run.span is not None:
                run.span.set_attribute(semconv.GEN_AI_TOOL_CALL_RESULT, as_text(plain(tool_output(output))))
            self._end(run_id)
        except Exception:
            log_bug("langchain on_tool_end")

    def on_tool_error(self, error, *, run_id, **kwargs):
        try:
            self._end(run_id, _real_error(error))
        except Exception:
            log_bug("langchain on_tool_error")

    # --- everything else only needs to be remembered so that the runs below find their agent --
    def on_retriever_start(self, serialized, query, *, run_id, parent_run_id=None, **kwargs):
        parent = self._parent(parent_run_id)
        self._plain(run_id, parent, parent.agent if parent else None)

    def on_retriever_end(self, documents, *, run_id, **kwargs):
        self._end(run_id)

    def on_retriever_error(self, error, *, run_id, **kwargs):
        self._end(run_id)


def agent_name(run_name: str | None, tags: list, metadata: dict) -> str | None:
    """The agent a chain run opens, or None. Explicit metadata wins; a LangGraph node is the run
    whose name equals its ``langgraph_node`` (its inner runnables and routing functions carry
    the same metadata under other names). LangGraph's hidden runs (``__start__``, channel
    writes) are never agents."""
    explicit = metadata.get(semconv.LANGCHAIN_AGENT_METADATA)
    if explicit:
        return explicit if isinstance(explicit, str) else run_name
    node = metadata.get("langgraph_node")
    if node and run_name == node and "langgraph:hidden" not in tags and not str(node).startswith("__"):
        return str(node)
    return None


def _root_context(parent: "_Run | None"):
    return parent.ctx if parent is not None and parent.ctx is not None else otel_context.get_current()


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


def tool_output(output):
    """What the tool returned: a ``ToolMessage``'s content (LangChain wraps the return value in
    one when the call came with a tool-call id), else the value itself."""
    if getattr(output, "type", None) == "tool" and hasattr(output, "content"):
        return output.content
    return output


def _serialized_name(serialized) -> str | None:
    if not isinstance(serialized, dict):
        return None
    if serialized.get("name"):
        return str(serialized["name"])
    ids = serialized.get("id")
    return str(ids[-1]) if isinstance(ids, list) and ids else None


def _real_error(error):
    """LangGraph ends a node that hands control elsewhere (``Command``, interrupts) with a
    control-flow exception; those are not failures of the agent."""
    if type(error).__name__ in ("GraphInterrupt", "ParentCommand", "GraphBubbleUp"):
        return None
    return error
