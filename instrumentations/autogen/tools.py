"""Arguments and result of an AutoGen function tool, on AutoGen's own ``execute_tool`` span.

AutoGen opens that span in ``BaseTool.run_json`` and calls ``run`` inside it, so while
``FunctionTool.run`` runs, the current span is the tool's span: the one place that sees the
validated arguments and the return value while the span is still open.
"""

from __future__ import annotations

import logging

from opentelemetry import trace

from tracerl import semconv

from .. import OnceLogger
from .._values import as_text

logger = logging.getLogger("tracerl.instrumentations.autogen")
log_bug = OnceLogger(logger)


def _tool_span(tool_name: str):
    """The current span when it is AutoGen's span for this tool, else None."""
    span = trace.get_current_span()
    attrs = getattr(span, "attributes", None) or {}
    if span.is_recording() and attrs.get(semconv.GEN_AI_TOOL_NAME) == tool_name \
            and attrs.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OP_EXECUTE_TOOL:
        return span
    return None


async def traced_run(wrapped, instance, args, kwargs):
    span = None
    try:
        span = _tool_span(instance.name)
        if span is not None:
            model = args[0] if args else kwargs.get("args")
            arguments = model.model_dump(mode="json") if hasattr(model, "model_dump") else model
            span.set_attribute(semconv.GEN_AI_TOOL_CALL_ARGUMENTS, as_text(arguments))
    except Exception:
        log_bug("autogen tool arguments")
    result = await wrapped(*args, **kwargs)
    try:
        if span is not None:
            span.set_attribute(semconv.GEN_AI_TOOL_CALL_RESULT, as_text(instance.return_value_as_string(result)))
    except Exception:
        log_bug("autogen tool result")
    return result
