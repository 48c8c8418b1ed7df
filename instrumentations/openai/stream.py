"""Streams: the span stays open while the caller reads, and ends when the stream is exhausted,
closed, left by ``with``, fails, or is garbage-collected, with what was accumulated so far.

Accumulators rebuild an `Outcome` from chunks: text and tool-call deltas, vLLM's
``prompt_token_ids`` (first chunk) and ``token_ids`` per delta, logprobs per delta, and the usage
chunk. The proxies are ``wrapt.ObjectProxy`` so that every other attribute of openai's
``Stream`` (``response``, ``_iterator``...) still works on the object the caller holds.
"""

from __future__ import annotations

import wrapt
from opentelemetry import trace

from tracerl import semconv

from .messages import get, responses_output_messages
from .response import Outcome, _usage, attributes, responses_outcome, token_logprobs


class _Choice:
    __slots__ = ("text", "tools", "token_ids", "logprobs", "finish", "prompt_token_ids")

    def __init__(self):
        self.text, self.tools, self.token_ids, self.logprobs = [], {}, [], []
        self.finish = None
        self.prompt_token_ids = None


class ChatAccumulator:
    def __init__(self):
        self.id = self.model = self.usage = self.prompt_token_ids = None
        self.choices: dict[int, _Choice] = {}

    def add(self, chunk) -> None:
        if self.id is None:
            self.id, self.model = get(chunk, "id"), get(chunk, "model")
        if self.prompt_token_ids is None:
            self.prompt_token_ids = get(chunk, "prompt_token_ids")
        usage = get(chunk, "usage")
        if usage is not None:
            self.usage = usage
        for c in get(chunk, "choices") or ():
            state = self.choices.get(get(c, "index", 0))
            if state is None:
                state = self.choices[get(c, "index", 0)] = _Choice()
            delta = get(c, "delta")
            if delta is not None:
                content = get(delta, "content")
                if content:
                    state.text.append(content)
                for call in get(delta, "tool_calls") or ():
                    entry = state.tools.setdefault(get(call, "index", 0), {"id": None, "name": None, "args": []})
                    if get(call, "id"):
                        entry["id"] = get(call, "id")
                    fn = get(call, "function")
                    if fn is not None:
                        if get(fn, "name"):
                            entry["name"] = get(fn, "name")
                        if get(fn, "arguments"):
                            entry["args"].append(get(fn, "arguments"))
            else:  # completions chunks carry text instead of a delta
                text = get(c, "text")
                if text:
                    state.text.append(text)
            if state.prompt_token_ids is None:
                state.prompt_token_ids = get(c, "prompt_token_ids")
            ids = get(c, "token_ids")
            if ids:
                state.token_ids.extend(ids)
            lps = token_logprobs(get(c, "logprobs"))
            if lps:
                state.logprobs.extend(lps)
            if get(c, "finish_reason"):
                state.finish = get(c, "finish_reason")

    def outcome(self) -> Outcome:
        from .messages import _arguments

        o = Outcome(response_id=self.id, model=self.model)
        messages = []
        for index in sorted(self.choices):
            state = self.choices[index]
            parts = [{"type": "text", "content": "".join(state.text)}] if state.text else []
            for i in sorted(state.tools):
                t = state.tools[i]
                parts.append({"type": "tool_call", "id": t["id"], "name": t["name"],
                              "arguments": _arguments("".join(t["args"]))})
            messages.append({"role": "assistant", "parts": parts, "finish_reason": state.finish})
            o.finish_reasons.append(state.finish or "")
        o.output_messages = messages
        _usage(o, self.usage)
        first = self.choices.get(min(self.choices)) if self.choices else None
        o.prompt_token_ids = self.prompt_token_ids or (first.prompt_token_ids if first else None)
        if first is not None:
            o.response_token_ids = first.token_ids or None
            o.logprobs = first.logprobs or None
        return o


class ResponsesAccumulator:
    """Responses API events: the final ``response.completed`` (or ``.incomplete``/``.failed``)
    event carries the whole response; text deltas are the fallback for a stream cut short."""

    def __init__(self):
        self.final = None
        self.text: list[str] = []
        self.logprobs: list = []
        self.id = self.model = None

    def add(self, event) -> None:
        kind = get(event, "type") or ""
        response = get(event, "response")
        if response is not None:
            self.id, self.model = get(response, "id"), get(response, "model")
            if kind in ("response.completed", "response.incomplete", "response.failed"):
                self.final = response
        elif kind == "response.output_text.delta":
            self.text.append(get(event, "delta") or "")
            for token in get(event, "logprobs") or ():
                self.logprobs.append(get(token, "logprob"))

    def outcome(self) -> Outcome:
        if self.final is not None:
            o = responses_outcome(self.final)
            if not o.logprobs and self.logprobs:
                o.logprobs = self.logprobs
            return o
        output = [{"type": "message", "content": [{"type": "output_text", "text": "".join(self.text)}]}]
        return Outcome(response_id=self.id, model=self.model,
                       output_messages=responses_output_messages(output, None),
                       logprobs=self.logprobs or None)


ACCUMULATOR = {"chat": ChatAccumulator, "completions": ChatAccumulator, "responses": ResponsesAccumulator}


class _SpanEnd:
    """Ends the stream's span exactly once, with the outcome or the error."""

    def __init__(self, span, accumulator, on_bug):
        self.span, self.accumulator, self.on_bug = span, accumulator, on_bug
        self.done = False

    def add(self, chunk) -> None:
        try:
            self.accumulator.add(chunk)
        except Exception:
            self.on_bug("stream chunk")

    def finish(self, error: BaseException | None = None) -> None:
        if self.done:
            return
        self.done = True
        try:
            self.span.set_attributes(attributes(self.accumulator.outcome()))
        except Exception:
            self.on_bug("stream outcome")
        if error is not None:
            record_error(self.span, error)
        self.span.end()


def record_error(span, error: BaseException) -> None:
    span.record_exception(error)
    span.set_attribute(semconv.ERROR_TYPE, type(error).__qualname__)
    span.set_status(trace.Status(trace.StatusCode.ERROR, f"{type(error).__name__}: {error}"))


class TracedStream(wrapt.ObjectProxy):
    def __init__(self, stream, end: _SpanEnd):
        super().__init__(stream)
        self._self_end = end

    def __iter__(self):
        return self

    def __next__(self):
        try:
            chunk = self.__wrapped__.__next__()
        except StopIteration:
            self._self_end.finish()
            raise
        except BaseException as exc:
            self._self_end.finish(exc)
            raise
        self._self_end.add(chunk)
        return chunk

    def __enter__(self):
        self.__wrapped__.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            return self.__wrapped__.__exit__(exc_type, exc, tb)
        finally:
            self._self_end.finish(exc)

    def close(self):
        try:
            return self.__wrapped__.close()
        finally:
            self._self_end.finish()

    def __del__(self):
        self._self_end.finish()


class TracedAsyncStream(wrapt.ObjectProxy):
    def __init__(self, stream, end: _SpanEnd):
        super().__init__(stream)
        self._self_end = end

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            chunk = await self.__wrapped__.__anext__()
        except StopAsyncIteration:
            self._self_end.finish()
            raise
        except BaseException as exc:
            self._self_end.finish(exc)
            raise
        self._self_end.add(chunk)
        return chunk

    async def __aenter__(self):
        await self.__wrapped__.__aenter__()
        return self

    async def __aexit__(self, exc_type, exc, tb):
        try:
            return await self.__wrapped__.__aexit__(exc_type, exc, tb)
        finally:
            self._self_end.finish(exc)

    async def close(self):
        try:
            return await self.__wrapped__.close()
        finally:
            self._self_end.finish()

    async def aclose(self):
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_end.finish()

    def __del__(self):
        self._self_end.finish()
