"""`tracerl serve-policy MODEL_DIR`: an OpenAI-compatible server for a local transformers model.

The embedded stand-in for vLLM on one machine (CPU, or one GPU). It answers
``/v1/chat/completions`` and ``/v1/completions`` in vLLM's shape, so tracerl's OpenAI
instrumentation records token ids and logprobs exactly as it would against vLLM:
``prompt_token_ids`` (top level for chat, per choice for completions), ``choices[].token_ids``,
``choices[].logprobs.content[]`` (chat) or ``logprobs.token_logprobs`` (completions).

- One model, served under whatever model name the request asks for.
- Chat prompts go through the tokenizer's chat template, with the request's ``tools``;
  ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks in the output come back
  as ``message.tool_calls`` (finish reason ``tool_calls``).
- Concurrent requests are batched: the first request waits ``batch_wait_ms`` for others, then
  one padded batch is decoded token by token with a KV cache.
- Logprobs are those of the raw model distribution (before temperature and top-p), like vLLM's
  default, so they match what the trainer computes for the same tokens.
- Weights are reloaded in place (`load_state_dict`, `load_checkpoint`, or
  ``POST /admin/reload_weights {"path": DIR, "version": N}``) between two batches; when a
  gateway is configured it is paused around the reload.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
import time
import urllib.request
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log = logging.getLogger("tracerl.policy_server")

TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


@dataclass
class Sampling:
    max_tokens: int = 64
    temperature: float = 1.0
    top_p: float = 1.0
    stop: list = field(default_factory=list)
    seed: int | None = None


@dataclass
class Generation:
    token_ids: list
    logprobs: list
    finish_reason: str  # stop | length


class RequestError(Exception):
    """A bad request: answered with 400 and this message."""


def parse_sampling(body: dict, default_max_tokens: int) -> Sampling:
    def number(key, default, cast=float):
        value = body.get(key, default)
        if value is None:
            return default
        try:
            return cast(value)
        except (TypeError, ValueError):
            raise RequestError(f"{key} must be a number") from None

    stop = body.get("stop") or []
    stop = [stop] if isinstance(stop, str) else list(stop)
    max_tokens = number("max_completion_tokens", None, int) or number("max_tokens", default_max_tokens, int)
    if max_tokens < 1:
        raise RequestError("max_tokens must be at least 1")
    return Sampling(max_tokens=max_tokens, temperature=number("temperature", 1.0), top_p=number("top_p", 1.0),
                    stop=stop, seed=number("seed", None, int))


def parse_tool_calls(text: str) -> tuple[str, list[dict]]:
    """Split ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` blocks out of the text:
    (the text without them, OpenAI-shaped tool calls). A block that is not such JSON stays text."""
    calls, kept = [], []
    last = 0
    for m in TOOL_CALL.finditer(text):
        try:
            payload = json.loads(m.group(1))
            name = payload["name"]
        except (ValueError, KeyError, TypeError):
            continue
        arguments = payload.get("arguments", {})
        kept.append(text[last:m.start()])
        last = m.end()
        calls.append({"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
                      "function": {"name": str(name),
                                   "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}})
    kept.append(text[last:])
    return "".join(kept).strip() if calls else text, calls


class PolicyModel:
    """A causal LM and its tokenizer, generating for batches of prompts under a lock that weight
    reloads also take."""

    def __init__(self, model_dir: str, device: str = "cpu", dtype: str = "auto"):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        self.torch = torch
        self.device = torch.device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        torch_dtype = resolve_dtype(dtype, self.device)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True, dtype=torch_dtype)
        self.model.to(self.device).eval()
        self.lock = threading.Lock()
        self.version = 0
        eos = self.tokenizer.eos_token_id
        extra = getattr(self.model.generation_config, "eos_token_id", None)
        self.stop_ids = {i for i in ([eos] + (extra if isinstance(extra, list) else [extra])) if i is not None}
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else (eos or 0)

    # --- prompts --------------------------------------------------------------------------------
    def chat_prompt(self, messages: list, tools: list | None) -> list[int]:
        try:
            text = self.tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True,
                                                      tokenize=False)
        except Exception as exc:  # noqa: BLE001 - a template error is the request's problem
            raise RequestError(f"chat template failed on these messages: {exc}") from None
        return self.tokenizer(text, add_special_tokens=False).input_ids

    def text_prompt(self, prompt) -> list[int]:
        if isinstance(prompt, list) and all(isinstance(i, int) for i in prompt):
            return list(prompt)
        if not isinstance(prompt, str):
            raise RequestError("prompt must be a string or a list of token ids")
        return self.tokenizer(prompt).input_ids

    # --- generation -----------------------------------------------------------------------------
    def generate(self, prompts: list[list[int]], params: list[Sampling]) -> list[Generation]:
        """Decode every prompt with its own sampling parameters, in one padded batch."""
        torch = self.torch
        with self.lock, torch.inference_mode():
            n = len(prompts)
            width = max(len(p) for p in prompts)
            ids = torch.full((n, width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((n, width), dtype=torch.long)
            for row, prompt in enumerate(prompts):  # left padding: every row ends at the same column
                ids[row, width - len(prompt):] = torch.tensor(prompt, dtype=torch.long)
                mask[row, width - len(prompt):] = 1
            ids, mask = ids.to(self.device), mask.to(self.device)
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            generators = [torch.Generator().manual_seed(p.seed) if p.seed is not None else None for p in params]
            out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True)
            tokens = [[] for _ in range(n)]
            logprobs = [[] for _ in range(n)]
            finish = [None] * n
            last_pos = positions[:, -1]
            for _ in range(max(p.max_tokens for p in params)):
                logits = out.logits[:, -1, :].float().cpu()
                raw = torch.log_softmax(logits, dim=-1)
                chosen = []
                for row in range(n):
                    if finish[row] is not None:
                        chosen.append(self.pad_id)
                        continue
                    token = sample(logits[row], params[row], generators[row])
                    tokens[row].append(token)
                    logprobs[row].append(float(raw[row, token]))
                    if token in self.stop_ids:
                        finish[row] = "stop"
                    elif params[row].stop and self._hits_stop(tokens[row], params[row].stop):
                        finish[row] = "stop"
                    elif len(tokens[row]) >= params[row].max_tokens:
                        finish[row] = "length"
                    chosen.append(token)
                if all(f is not None for f in finish):
                    break
                step = torch.tensor(chosen, dtype=torch.long, device=self.device).unsqueeze(-1)
                mask = torch.cat([mask, torch.ones((n, 1), dtype=torch.long, device=self.device)], dim=-1)
                last_pos = last_pos + 1
                out = self.model(input_ids=step, attention_mask=mask, position_ids=last_pos.unsqueeze(-1),
                                 past_key_values=out.past_key_values, use_cache=True)
            return [Generation(t, lp, f or "length") for t, lp, f in zip(tokens, logprobs, finish)]

    def _hits_stop(self, tokens: list[int], stops: list[str]) -> bool:
        text = self.tokenizer.decode(tokens[-8:], skip_special_tokens=True)
        return any(s and text.endswith(s) for s in stops)

    def decode(self, token_ids: list[int]) -> str:
        return self.tokenizer.decode([t for t in token_ids if t not in self.stop_ids], skip_special_tokens=True)

    # --- weights --------------------------------------------------------------------------------
    def load_state_dict(self, state_dict: dict, version: int | None = None) -> None:
        """Copy new weights into the served model, in place, between two batches."""
        with self.lock, self.torch.no_grad():
            target = self.model.state_dict()  # tensors that share storage with the model's
            missing = [name for name in target if name not in state_dict]
            if missing:
                raise ValueError(f"weights lack {len(missing)} tensors of the served model, e.g. {missing[:3]}")
            for name, tensor in target.items():
                tensor.copy_(state_dict[name].to(tensor.device, tensor.dtype))
            if version is not None:
                self.version = int(version)

    def load_checkpoint(self, path: str, version: int | None = None) -> None:
        """Reload from a model folder of safetensors files (a trainer checkpoint)."""
        from pathlib import Path

        from safetensors.torch import load_file

        files = sorted(Path(path).glob("*.safetensors"))
        if not files:
            raise ValueError(f"{path}: no .safetensors files")
        state = {}
        for f in files:
            state.update(load_file(str(f)))
        if "lm_head.weight" not in state and "model.embed_tokens.weight" in state:
            state["lm_head.weight"] = state["model.embed_tokens.weight"]  # tied embeddings are saved once
        self.load_state_dict(state, version)


def resolve_dtype(dtype: str, device):
    import torch

    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" and torch.cuda.is_bf16_supported() else torch.float32
    try:
        return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    except KeyError:
        raise ValueError(f"dtype {dtype!r}: one of auto, float32, bfloat16, float16") from None


def sample(logits, params: Sampling, generator) -> int:
    """Greedy at temperature 0; otherwise softmax(z / T) restricted to the top-p nucleus."""
    import torch

    if params.temperature <= 0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / params.temperature, dim=-1)
    if params.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        keep = sorted_probs.cumsum(-1) - sorted_probs < params.top_p  # always keeps the first
        probs = torch.zeros_like(probs).scatter_(0, order[keep], sorted_probs[keep])
    return int(torch.multinomial(probs, 1, generator=generator))


class Batcher:
    """Collects concurrent requests into batches for one generating thread."""

    def __init__(self, model: PolicyModel, max_batch: int = 32, wait_ms: float = 5.0):
        self.model, self.max_batch, self.wait_s = model, max_batch, wait_ms / 1000
        self.queue: queue.Queue = queue.Queue()
        self.batches = 0  # how many batches ran (tests look at it)
        self.largest_batch = 0
        self._thread = threading.Thread(target=self._run, name="tracerl-policy-batcher", daemon=True)
        self._thread.start()

    def submit(self, prompts: list[list[int]], params: Sampling) -> list[Generation]:
        futures = []
        for prompt in prompts:
            fut: Future = Future()
            self.queue.put((prompt, params, fut))
            futures.append(fut)
        return [f.result() for f in futures]

    def close(self) -> None:
        self.queue.put(None)

    def _run(self) -> None:
        while True:
            first = self.queue.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.wait_s
            while len(batch) < self.max_batch:
                try:
                    item = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    self.queue.put(None)
                    break
                batch.append(item)
            self.batches += 1
            self.largest_batch = max(self.largest_batch, len(batch))
            try:
                results = self.model.generate([b[0] for b in batch], [b[1] for b in batch])
                for (_, _, fut), result in zip(batch, results):
                    fut.set_result(result)
            except Exception as exc:  # noqa: BLE001 - each waiting request gets the error
                log.exception("generation failed")
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc)


class Gateway:
    """The tracerl gateway's admin API: pause new calls around a weight reload."""

    def __init__(self, url: str, token: str = ""):
        self.url, self.token = url.rstrip("/"), token

    def _post(self, path: str) -> None:
        request = urllib.request.Request(self.url + path, data=b"{}", method="POST",
                                         headers={"content-type": "application/json",
                                                  **({"authorization": f"Bearer {self.token}"} if self.token else {})})
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()

    def pause(self) -> None:
        self._post("/admin/pause")

    def resume(self) -> None:
        self._post("/admin/resume")


class PolicyServer:
    """The HTTP server around a `PolicyModel`: ``start()``, ``url``, ``reload(...)``, ``stop()``."""

    def __init__(self, model: PolicyModel, host: str = "127.0.0.1", port: int = 0, *, max_batch: int = 32,
                 batch_wait_ms: float = 5.0, default_max_tokens: int = 256, gateway: Gateway | None = None,
                 admin_token: str = ""):
        self.model = model
        self.batcher = Batcher(model, max_batch, batch_wait_ms)
        self.default_max_tokens = default_max_tokens
        self.gateway = gateway
        self.admin_token = admin_token
        self.requests = 0
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "PolicyServer":
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="tracerl-policy-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.batcher.close()

    def reload(self, *, state_dict: dict | None = None, path: str | None = None, version: int | None = None) -> None:
        """New weights in place (from memory or a checkpoint folder), the gateway paused meanwhile."""
        if self.gateway is not None:
            self.gateway.pause()
        try:
            if state_dict is not None:
                self.model.load_state_dict(state_dict, version)
            elif path is not None:
                self.model.load_checkpoint(path, version)
            else:
                raise ValueError("reload needs state_dict or path")
        finally:
            if self.gateway is not None:
                self.gateway.resume()

    # --- request handling -------------------------------------------------------------------------
    def chat(self, body: dict) -> dict:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise RequestError("messages must be a non-empty list")
        if body.get("stream"):
            raise RequestError("stream is not supported by the CPU policy server")
        params = parse_sampling(body, self.default_max_tokens)
        prompt = self.model.chat_prompt(messages, body.get("tools"))
        n = int(body.get("n") or 1)
        outs = self.batcher.submit([prompt] * n, params)
        choices = []
        for index, out in enumerate(outs):
            text, calls = parse_tool_calls(self.model.decode(out.token_ids))
            message = {"role": "assistant", "content": text if (text or not calls) else None}
            if calls:
                message["tool_calls"] = calls
            choice = {"index": index, "message": message,
                      "finish_reason": "tool_calls" if calls else out.finish_reason,
                      "token_ids": out.token_ids, "logprobs": None}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": [self._logprob_entry(t, lp) for t, lp in
                                                  zip(out.token_ids, out.logprobs)]}
            choices.append(choice)
        return self._envelope("chat.completion", "chatcmpl", body, prompt, outs, choices, top_level_prompt=True)

    def completions(self, body: dict) -> dict:
        if body.get("stream"):
            raise RequestError("stream is not supported by the CPU policy server")
        prompt = self.model.text_prompt(body.get("prompt"))
        params = parse_sampling(body, 16)
        n = int(body.get("n") or 1)
        outs = self.batcher.submit([prompt] * n, params)
        choices = []
        for index, out in enumerate(outs):
            choice = {"index": index, "text": self.model.decode(out.token_ids), "finish_reason": out.finish_reason,
                      "token_ids": out.token_ids, "prompt_token_ids": prompt, "logprobs": None}
            if body.get("logprobs") is not None and body.get("logprobs") is not False:
                choice["logprobs"] = {
                    "tokens": [self.model.tokenizer.convert_ids_to_tokens(t) for t in out.token_ids],
                    "token_logprobs": out.logprobs,
                    "top_logprobs": [None] * len(out.token_ids),
                    "text_offset": [0] * len(out.token_ids)}
            choices.append(choice)
        return self._envelope("text_completion", "cmpl", body, prompt, outs, choices, top_level_prompt=False)

    def _logprob_entry(self, token_id: int, logprob: float) -> dict:
        token = self.model.tokenizer.convert_ids_to_tokens(token_id) or ""
        return {"token": token, "logprob": logprob, "bytes": list(token.encode()), "top_logprobs": []}

    def _envelope(self, kind, prefix, body, prompt, outs, choices, top_level_prompt) -> dict:
        self.requests += 1
        reply = {"id": f"{prefix}-{uuid.uuid4().hex}", "object": kind, "created": int(time.time()),
                 "model": body.get("model") or "policy", "choices": choices,
                 "usage": {"prompt_tokens": len(prompt), "completion_tokens": sum(len(o.token_ids) for o in outs),
                           "total_tokens": len(prompt) + sum(len(o.token_ids) for o in outs)},
                 "system_fingerprint": f"tracerl-policy-v{self.model.version}"}
        if top_level_prompt:
            reply["prompt_token_ids"] = prompt
        return reply


def _handler(server: PolicyServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet; errors are logged where they happen
            pass

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
            self._send(status, {"error": {"message": message, "type": kind, "code": status}})

        def do_GET(self):
            path = self.path.split("?")[0].rstrip("/")
            if path in ("/health", "/v1/health"):
                self._send(200, {"status": "ok", "version": server.model.version})
            elif path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": "policy", "object": "model", "owned_by": "tracerl"}]})
            else:
                self._error(404, f"no route {self.path}", "not_found")

        def do_POST(self):
            path = self.path.split("?")[0].rstrip("/")
            try:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(body, dict):
                    raise RequestError("the body must be a JSON object")
            except (ValueError, RequestError) as exc:
                return self._error(400, f"invalid JSON body: {exc}")
            try:
                if path == "/v1/chat/completions":
                    return self._send(200, server.chat(body))
                if path == "/v1/completions":
                    return self._send(200, server.completions(body))
                if path == "/admin/reload_weights":
                    if server.admin_token and self.headers.get("authorization") != f"Bearer {server.admin_token}":
                        return self._error(401, "admin token required", "unauthorized")
                    if not body.get("path"):
                        raise RequestError("path (a checkpoint folder) is required")
                    server.reload(path=body["path"], version=body.get("version"))
                    return self._send(200, {"status": "reloaded", "version": server.model.version})
                return self._error(404, f"no route {self.path}", "not_found")
            except RequestError as exc:
                return self._error(400, str(exc))
            except Exception as exc:  # noqa: BLE001
                log.exception("request failed")
                return self._error(500, f"{type(exc).__name__}: {exc}", "server_error")

    return Handler


def serve(model_dir: str, host: str = "127.0.0.1", port: int = 8000, device: str = "cpu", dtype: str = "auto",
          max_batch: int = 32, batch_wait_ms: float = 5.0, gateway_url: str | None = None,
          admin_token: str = "") -> PolicyServer:
    model = PolicyModel(model_dir, device=device, dtype=dtype)
    gateway = Gateway(gateway_url) if gateway_url else None
    return PolicyServer(model, host, port, max_batch=max_batch, batch_wait_ms=batch_wait_ms, gateway=gateway,
                        admin_token=admin_token).start()
