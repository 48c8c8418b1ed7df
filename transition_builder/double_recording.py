"""One model call, one record: drop the second recording of a call (rule in `tracerl.semconv`).

A framework instrumentation and the OpenAI-client instrumentation may both record the same call.
The client span runs inside the framework's span and/or carries the same ``gen_ai.response.id``;
the client span is kept (it has the token ids), the framework span only lends what it lacks.
"""

from __future__ import annotations

from .conventions import LLMCall
from .tree import SpanTree


def drop_double_recordings(calls: list[LLMCall], tree: SpanTree) -> tuple[list[LLMCall], int]:
    """The calls with every second recording removed, and how many were removed."""
    if len(calls) < 2:
        return calls, 0
    by_span = {c.span.span_id: c for c in calls}
    dropped: dict[str, LLMCall] = {}  # span id of a dropped record -> the record kept instead
    # 1. an LLM span with an LLM-span descendant wraps that call
    for call in calls:
        for above in tree.ancestors(call.span):
            wrapper = by_span.get(above.span_id)
            if wrapper is not None:
                dropped.setdefault(wrapper.span.span_id, call)
    # 2. among LLM spans with one response id: token ids win, then depth
    by_response: dict[str, list[LLMCall]] = {}
    for call in calls:
        if call.response_id and call.span.span_id not in dropped:
            by_response.setdefault(call.response_id, []).append(call)
    for same in by_response.values():
        if len(same) > 1:
            keep = max(same, key=lambda c: (c.has_token_ids, tree.depth(c.span)))
            for other in same:
                if other is not keep:
                    dropped[other.span.span_id] = keep
    kept = [c for c in calls if c.span.span_id not in dropped]
    for span_id, keep in dropped.items():
        _lend(by_span[span_id], keep)
    return kept, len(dropped)


def _lend(wrapper: LLMCall, keep: LLMCall) -> None:
    """What the kept record lacks, taken from the wrapper: messages, model."""
    if keep.span.span_id in (wrapper.span.span_id,):
        return
    if not keep.model:
        keep.model = wrapper.model
    if not keep.input_messages and wrapper.input_messages:
        keep._messages = (wrapper.input_messages, keep.output_messages or wrapper.output_messages)
