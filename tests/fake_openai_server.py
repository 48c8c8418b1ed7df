"""A scripted OpenAI-compatible HTTP server on a free loopback port, for tests.

It answers ``/v1/chat/completions``, ``/v1/completions`` and ``/v1/responses`` the way vLLM does
when asked for token ids and logprobs: ``prompt_token_ids`` (top level for chat and responses,
per choice for completions), ``choices[].token_ids``, ``logprobs.content[]``; in streams the
prompt ids come in the first chunk and token ids with every delta. Replies are scripted
(`Reply`, consumed in order; then `default`), and every request is recorded.

    with FakeOpenAIServer() as server:
        server.script(Reply("4", finish_reason="stop"))
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
        ...
        server.requests[-1].body["messages"]

Streams can also be delivered piece by piece (chunked), to test what sits in between: a reply
with ``hold`` (a ``threading.Event``) sends its first event, then waits for the event before the
rest (a reply that is not streamed waits for it before answering); ``cut_after=N`` sends N events and drops the connection mid-stream. ``GET /v1/models``
lists the server's model.

Token ids come from a toy tokenizer (`tokenize`: words with their trailing space, each id a
stable hash), so a test can compute the ids it expects. Like vLLM, ids are returned only when
the request has ``return_token_ids: true`` and logprobs only with ``logprobs`` (unless the
server is made with ``always_tokens=True``).
"""

from __future__ import annotations

import json
import re
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_TOKEN_RE = re.compile(r"\s*\S+\s*|\s+")


def tokenize(text: str) -> list[str]:
    return _TOKEN_RE.findall(text or "")


def token_id(token: str) -> int:
    return 1000 + zlib.crc32(token.encode()) % 30000


def token_ids(text: str) -> list[int]:
    return [token_id(t) for t in tokenize(text)]


def logprob(i: int) -> float:
    """The logprob the server reports for the i-th generated token."""
    return round(-0.05 * (i + 1), 4)


def render_chat(messages: list) -> str:
    """The 'chat template' behind prompt_token_ids: one ``role: content`` line per message."""
    lines = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        lines.append(f"{m.get('role')}: {content or ''}\n")
    return "".join(lines)


def render_responses_input(body: dict) -> str:
    items = body.get("input")
    text = f"system: {body['instructions']}\n" if body.get("instructions") else ""
    if isinstance(items, str):
        return text + f"user: {items}\n"
    for item in items or []:
        content = item.get("content", item.get("output", ""))
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        text += f"{item.get('role', item.get('type'))}: {content}\n"
    return text


@dataclass
class Reply:
    """One scripted answer. ``tool_calls``: list of ``(name, arguments_dict)``, with ids
    ``call_0``, ``call_1``... unless ``call_ids`` names them (agent frameworks such as the OpenAI
    Agents SDK reject an id reused across turns). ``status`` other than 200 answers with an
    OpenAI-style error body carrying ``error``."""

    content: str = "ok"
    tool_calls: list = field(default_factory=list)
    finish_reason: str | None = None
    status: int = 200
    error: str = "scripted error"
    delay_s: float = 0.0
    call_ids: list | None = None
    hold: threading.Event | None = None  # streams: first event, then wait for this, then the rest;
    #                                      other replies: wait for this before answering
    cut_after: int | None = None  # streams: drop the connection after this many events

    def call_id(self, i: int) -> str:
        return self.call_ids[i] if self.call_ids and i < len(self.call_ids) else f"call_{i}"


@dataclass
class Recorded:
    path: str
    headers: dict
    body: dict


class FakeOpenAIServer:
    def __init__(self, default: Reply | None = None, always_tokens: bool = False, model: str = "fake-policy"):
        self.default = default or Reply()
        self.always_tokens = always_tokens
        self.model = model
        self.requests: list[Recorded] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        self._connections: set = set()

    # --- lifecycle ---
    def start(self) -> "FakeOpenAIServer":
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and drop the open (keep-alive) connections, as a server that dies would."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:
            connections, self._connections = list(self._connections), set()
        for conn in connections:
            try:
                conn.shutdown(2)
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting ---
    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def reset(self) -> None:
        """Forget scripted replies not yet used and the recorded requests (for a server shared
        by several tests)."""
        with self._lock:
            self._replies.clear()
            self.requests.clear()

    def _next(self) -> Reply:
        with self._lock:
            return self._replies.popleft() if self._replies else self.default

    def _id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}-{self._counter}"

    # --- answers ---
    def answer(self, path: str, body: dict) -> tuple[int, str, bytes]:
        """(status, content type, body bytes) for one request."""
        reply = self._next()
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.hold is not None and not body.get("stream"):
            reply.hold.wait(30)
        if reply.status != 200:
            payload = {"error": {"message": reply.error, "type": "invalid_request_error", "code": str(reply.status)}}
            return reply.status, "application/json", json.dumps(payload).encode()
        want_ids = self.always_tokens or bool(body.get("return_token_ids"))
        want_lp = self.always_tokens or bool(body.get("logprobs")) or bool(body.get("top_logprobs"))
        kind = path.rsplit("/", 1)[-1]
        if kind == "completions" and path.endswith("chat/completions"):
            kind = "chat"
        build = {"chat": _Chat, "completions": _Completion, "responses": _Responses}.get(kind)
        if build is None:
            return 404, "application/json", b'{"error": {"message": "no such endpoint"}}'
        answer = build(self, body, reply, want_ids, want_lp)
        if body.get("stream"):
            events = [f"data: {json.dumps(e)}\n\n".encode() for e in answer.stream()]
            if kind != "responses":
                events.append(b"data: [DONE]\n\n")
            if reply.hold is not None or reply.cut_after is not None:
                return 200, "text/event-stream", _Paced(events, reply)
            return 200, "text/event-stream", b"".join(events)
        return 200, "application/json", json.dumps(answer.full()).encode()


class _Answer:
    def __init__(self, server: FakeOpenAIServer, body: dict, reply: Reply, want_ids: bool, want_lp: bool):
        self.server, self.body, self.reply = server, body, reply
        self.want_ids, self.want_lp = want_ids, want_lp
        self.model = body.get("model") or server.model
        self.tokens = tokenize(reply.content)
        self.prompt_ids = token_ids(self.prompt_text())
        self.finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        self.created = int(time.time())

    def prompt_text(self) -> str:
        raise NotImplementedError

    def usage(self) -> dict:
        return {"prompt_tokens": len(self.prompt_ids), "completion_tokens": len(self.tokens),
                "total_tokens": len(self.prompt_ids) + len(self.tokens)}

    def lp_entry(self, i: int, tok: str) -> dict:
        return {"token": tok, "logprob": logprob(i), "bytes": list(tok.encode()), "top_logprobs": []}


class _Chat(_Answer):
    def prompt_text(self):
        return render_chat(self.body.get("messages") or [])

    def tool_calls(self):
        return [{"id": self.reply.call_id(i), "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(self.reply.tool_calls)]

    def full(self):
        choice = {"index": 0, "finish_reason": self.finish,
                  "message": {"role": "assistant", "content": self.reply.content or None}}
        if self.reply.tool_calls:
            choice["message"]["tool_calls"] = self.tool_calls()
        if self.want_lp:
            choice["logprobs"] = {"content": [self.lp_entry(i, t) for i, t in enumerate(self.tokens)]}
        out = {"id": self.server._id("chatcmpl"), "object": "chat.completion", "created": self.created,
               "model": self.model, "choices": [choice], "usage": self.usage()}
        if self.want_ids:
            choice["token_ids"] = token_ids(self.reply.content)
            out["prompt_token_ids"] = self.prompt_ids
        return out

    def stream(self):
        rid = self.server._id("chatcmpl")
        base = {"id": rid, "object": "chat.completion.chunk", "created": self.created, "model": self.model}
        first = dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        if self.want_ids:
            first["prompt_token_ids"] = self.prompt_ids
        events = [first]
        for i, tok in enumerate(self.tokens):
            choice = {"index": 0, "delta": {"content": tok}, "finish_reason": None}
            if self.want_ids:
                choice["token_ids"] = [token_id(tok)]
            if self.want_lp:
                choice["logprobs"] = {"content": [self.lp_entry(i, tok)]}
            events.append(dict(base, choices=[choice]))
        for i, call in enumerate(self.tool_calls()):
            args = call["function"]["arguments"]
            half = len(args) // 2
            events.append(dict(base, choices=[{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
                {"index": i, "id": call["id"], "type": "function",
                 "function": {"name": call["function"]["name"], "arguments": args[:half]}}]}}]))
            events.append(dict(base, choices=[{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
                {"index": i, "function": {"arguments": args[half:]}}]}}]))
        events.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": self.finish}]))
        if (self.body.get("stream_options") or {}).get("include_usage"):
            events.append(dict(base, choices=[], usage=self.usage()))
        return events


class _Completion(_Answer):
    def prompt_text(self):
        prompt = self.body.get("prompt")
        return prompt if isinstance(prompt, str) else "".join(prompt or [])

    def logprobs(self, tokens, start=0):
        return {"tokens": tokens, "token_logprobs": [logprob(start + i) for i in range(len(tokens))],
                "top_logprobs": None, "text_offset": None}

    def full(self):
        choice = {"index": 0, "text": self.reply.content, "finish_reason": self.finish}
        if self.want_lp:
            choice["logprobs"] = self.logprobs(self.tokens)
        if self.want_ids:
            choice["token_ids"] = token_ids(self.reply.content)
            choice["prompt_token_ids"] = self.prompt_ids
        return {"id": self.server._id("cmpl"), "object": "text_completion", "created": self.created,
                "model": self.model, "choices": [choice], "usage": self.usage()}

    def stream(self):
        rid = self.server._id("cmpl")
        events = []
        for i, tok in enumerate(self.tokens):
            choice = {"index": 0, "text": tok, "finish_reason": None}
            if self.want_ids:
                choice["token_ids"] = [token_id(tok)]
                if i == 0:
                    choice["prompt_token_ids"] = self.prompt_ids
            if self.want_lp:
                choice["logprobs"] = self.logprobs([tok], i)
            events.append({"id": rid, "object": "text_completion", "created": self.created,
                           "model": self.model, "choices": [choice]})
        events.append({"id": rid, "object": "text_completion", "created": self.created, "model": self.model,
                       "choices": [{"index": 0, "text": "", "finish_reason": self.finish}]})
        return events


class _Responses(_Answer):
    def prompt_text(self):
        return render_responses_input(self.body)

    def usage(self):
        return {"input_tokens": len(self.prompt_ids), "output_tokens": len(self.tokens),
                "total_tokens": len(self.prompt_ids) + len(self.tokens),
                "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}

    def full(self, rid=None):
        output = []
        if self.reply.content:
            part = {"type": "output_text", "text": self.reply.content, "annotations": []}
            if self.want_lp:
                part["logprobs"] = [self.lp_entry(i, t) for i, t in enumerate(self.tokens)]
            output.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                           "content": [part]})
        for i, (name, args) in enumerate(self.reply.tool_calls):
            output.append({"type": "function_call", "id": f"fc_{i}", "call_id": self.reply.call_id(i), "name": name,
                           "arguments": json.dumps(args), "status": "completed"})
        out = {"id": rid or self.server._id("resp"), "object": "response", "created_at": self.created,
               "model": self.model, "status": "completed", "output": output, "usage": self.usage(),
               "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
        if self.want_ids:
            out["prompt_token_ids"] = self.prompt_ids
            out["output_token_ids"] = token_ids(self.reply.content)
        return out

    def stream(self):
        rid = self.server._id("resp")
        created = dict(self.full(rid), status="in_progress", output=[])
        events = [{"type": "response.created", "sequence_number": 0, "response": created}]
        for i, tok in enumerate(self.tokens):
            event = {"type": "response.output_text.delta", "sequence_number": i + 1, "item_id": "msg_1",
                     "output_index": 0, "content_index": 0, "delta": tok}
            if self.want_lp:
                event["logprobs"] = [self.lp_entry(i, tok)]
            events.append(event)
        events.append({"type": "response.completed", "sequence_number": len(self.tokens) + 1,
                       "response": self.full(rid)})
        return events


class _Paced:
    """Stream events written one chunk at a time (see `Reply.hold` and `Reply.cut_after`)."""

    def __init__(self, events: list[bytes], reply: Reply):
        self.events, self.reply = events, reply

    def write(self, handler: "_Handler") -> None:
        for i, event in enumerate(self.events):
            if self.reply.cut_after is not None and i >= self.reply.cut_after:
                handler.close_connection = True
                handler.wfile.flush()
                handler.connection.shutdown(2)  # mid-stream, without the closing chunk
                return
            if i == 1 and self.reply.hold is not None:
                self.reply.hold.wait(30)
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")


class _Handler(BaseHTTPRequestHandler):
    owner: FakeOpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test output clean
        pass

    def setup(self):
        super().setup()
        with self.owner._lock:
            self.owner._connections.add(self.connection)

    def finish(self):
        with self.owner._lock:
            self.owner._connections.discard(self.connection)
        super().finish()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        self.owner.requests.append(Recorded(self.path, dict(self.headers), body))
        status, ctype, payload = self.owner.answer(self.path, body)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if isinstance(payload, _Paced):
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            payload.write(self)
            return
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        if self.path.rstrip("/") != "/v1/models":
            self.send_error(404)
            return
        payload = json.dumps({"object": "list", "data": [
            {"id": self.owner.model, "object": "model", "created": 0, "owned_by": "fake"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
