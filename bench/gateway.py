"""What `tracerl gateway` adds to a model call: latency per call and calls per second, next to
calling the upstream directly in the same run, for plain and streamed chat completions.

Processes, all on loopback: a fast canned OpenAI-compatible upstream (aiohttp; vLLM-style token
ids and logprobs when asked, a 100-token answer, streamed one token per event), a real
`tracerl collector` on a temporary embedded store (the gateway exports every span to it, as in
production; ``--no-collector`` exports to a dead endpoint instead, where spans are dropped),
`tracerl gateway` with and without ``--capture-tokens``, and, when it is installed in
``.venv-bench`` (``pip install 'litellm[proxy]'``), LiteLLM's proxy on the same upstream as a peer
(it records nothing: no callbacks configured).

Each target gets the same load, interleaved in rounds so that noise from other work on the
machine falls on all of them alike:
- latency: sequential calls, one at a time; p50 / p99 of the time to the last byte (and, for
  streams, to the first event), and what the proxy adds over the direct call;
- throughput: ``--concurrency`` callers at once, calls per second.

    .venv/bin/python bench/gateway.py [--calls 300] [--rounds 4] [--load-calls 1500] [--concurrency 16]

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROMPT = "You are a careful assistant. " * 20 + "What is 2 + 2?"
ANSWER_TOKENS = 100
LITELLM = REPO / ".venv-bench" / "bin" / "litellm"


# --- the upstream (run as `bench/gateway.py --serve-upstream PORT`) ----------------------------
def serve_upstream(port: int) -> None:
    """Canned chat completions, as fast as aiohttp serves them."""
    from aiohttp import web

    tokens = [f"w{i} " for i in range(ANSWER_TOKENS)]
    prompt_ids = list(range(220))

    def completion(with_ids: bool, with_logprobs: bool) -> bytes:
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "".join(tokens)}}
        if with_ids:
            choice["token_ids"] = list(range(1000, 1000 + ANSWER_TOKENS))
        if with_logprobs:
            choice["logprobs"] = {"content": [{"token": t, "logprob": -0.1, "bytes": list(t.encode()),
                                               "top_logprobs": []} for t in tokens]}
        out = {"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "policy",
               "choices": [choice], "usage": {"prompt_tokens": 220, "completion_tokens": ANSWER_TOKENS,
                                              "total_tokens": 220 + ANSWER_TOKENS}}
        if with_ids:
            out["prompt_token_ids"] = prompt_ids
        return json.dumps(out).encode()

    def events(with_ids: bool, with_logprobs: bool) -> list[bytes]:
        base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "policy"}
        first = dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        if with_ids:
            first["prompt_token_ids"] = prompt_ids
        out = [first]
        for i, tok in enumerate(tokens):
            choice = {"index": 0, "delta": {"content": tok}, "finish_reason": None}
            if with_ids:
                choice["token_ids"] = [1000 + i]
            if with_logprobs:
                choice["logprobs"] = {"content": [{"token": tok, "logprob": -0.1, "bytes": list(tok.encode()),
                                                   "top_logprobs": []}]}
            out.append(dict(base, choices=[choice]))
        out.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
        return [b"data: " + json.dumps(e).encode() + b"\n\n" for e in out] + [b"data: [DONE]\n\n"]

    variants = {(i, lp): (completion(i, lp), events(i, lp)) for i in (False, True) for lp in (False, True)}

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        whole, stream = variants[(bool(body.get("return_token_ids")), bool(body.get("logprobs")))]
        if not body.get("stream"):
            return web.Response(body=whole, content_type="application/json")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for event in stream:
            await resp.write(event)
        await resp.write_eof()
        return resp

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "policy", "object": "model"}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


# --- processes ---------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float, proc: subprocess.Popen, headers: dict | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[:3]} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer in {timeout}s")


class Processes:
    def __init__(self):
        self.procs: list[subprocess.Popen] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="tracerl-bench-gw-"))

    def start(self, cmd: list[str], env: dict | None = None) -> subprocess.Popen:
        log = open(self.tmp / f"proc{len(self.procs)}.log", "wb")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
                                env={**os.environ, **(env or {})})
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


def start_targets(ps: Processes, args) -> dict[str, dict]:
    """name -> {"url": base URL (…/v1), "headers": extra request headers}."""
    py = sys.executable
    upstream_port = free_port()
    proc = ps.start([py, __file__, "--serve-upstream", str(upstream_port)])
    upstream = f"http://127.0.0.1:{upstream_port}/v1"
    wait_http(upstream + "/models", 30, proc)
    targets = {"direct": {"url": upstream, "headers": {}}}

    otlp = f"127.0.0.1:{free_port()}"  # nothing listens there unless the collector does
    if not args.no_collector:
        query = free_port()
        proc = ps.start([py, "-m", "tracerl.cli", "collector", "--store", f"chdb://{ps.tmp / 'store'}",
                         "--grpc", otlp, "--http", "", "--query", f"127.0.0.1:{query}"])
        wait_http(f"http://127.0.0.1:{query}/ping", 90, proc)

    for name, extra in (("tracerl gateway", ["--capture-tokens"]), ("tracerl gateway, no capture", [])):
        port = free_port()
        proc = ps.start([py, "-m", "tracerl.cli", "gateway", "--upstream", upstream, "--listen", f"127.0.0.1:{port}",
                         "--otlp-endpoint", otlp, "--log-level", "ERROR", *extra])
        wait_http(f"http://127.0.0.1:{port}/health", 30, proc)
        targets[name] = {"url": f"http://127.0.0.1:{port}/v1", "headers": {}}

    if args.no_litellm or not LITELLM.exists():
        print(f"LiteLLM proxy: not measured ({'--no-litellm' if args.no_litellm else f'{LITELLM} not installed'})")
        return targets
    port, key = free_port(), "sk-bench-" + secrets.token_hex(16)
    config = ps.tmp / "litellm.yaml"
    config.write_text("model_list:\n  - model_name: policy\n    litellm_params:\n      model: openai/policy\n"
                      f"      api_base: {upstream}\n      api_key: sk-upstream\n")
    proc = ps.start([str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
                     "--num_workers", "1"],
                    env={"LITELLM_MASTER_KEY": key, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"})
    try:
        wait_http(f"http://127.0.0.1:{port}/health/liveliness", 180, proc)
    except (RuntimeError, TimeoutError) as exc:
        print(f"LiteLLM proxy: not measured (did not start: {exc})")
        return targets
    targets["litellm proxy"] = {"url": f"http://127.0.0.1:{port}/v1", "headers": {"Authorization": f"Bearer {key}"}}
    return targets


# --- load --------------------------------------------------------------------------------------
async def one_call(session, target: dict, stream: bool) -> tuple[float, float]:
    """(seconds to the first byte of the body, seconds to the last)."""
    body = {"model": "policy", "messages": [{"role": "user", "content": PROMPT}], "max_tokens": ANSWER_TOKENS,
            "stream": stream}
    start = time.perf_counter()
    async with session.post(target["url"] + "/chat/completions", json=body, headers=target["headers"]) as resp:
        first = None
        async for _ in resp.content.iter_any():
            if first is None:
                first = time.perf_counter()
        if resp.status != 200:
            raise RuntimeError(f"HTTP {resp.status} from {target['url']}")
    end = time.perf_counter()
    return (first or end) - start, end - start


async def sequential(session, target: dict, stream: bool, n: int) -> list[tuple[float, float]]:
    return [await one_call(session, target, stream) for _ in range(n)]


async def concurrent(session, target: dict, stream: bool, n: int, workers: int) -> float:
    """Calls per second with ``workers`` callers sharing ``n`` calls."""
    left = n

    async def worker():
        nonlocal left
        while left > 0:
            left -= 1
            await one_call(session, target, stream)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return n / (time.perf_counter() - start)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(targets: dict, args) -> dict:
    import aiohttp

    results = {}
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=3.0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:
        for stream in (False, True):
            for target in targets.values():
                await sequential(session, target, stream, args.warmup)
            latencies = {name: [] for name in targets}
            rates = {name: [] for name in targets}
            per_round = max(1, args.calls // args.rounds)
            for _ in range(args.rounds):  # interleaved: noise falls on every target alike
                for name, target in targets.items():
                    latencies[name] += await sequential(session, target, stream, per_round)
                    rates[name].append(await concurrent(session, target, stream, args.load_calls // args.rounds,
                                                        args.concurrency))
            results[stream] = {name: {"total": [t for _, t in latencies[name]], "first": [f for f, _ in latencies[name]],
                                      "rate": statistics.median(rates[name])} for name in targets}
    return results


def report(results: dict, args) -> None:
    for stream, by_target in results.items():
        direct = by_target["direct"]
        d50, d99 = pct(direct["total"], 0.5), pct(direct["total"], 0.99)
        print(f"\n{'streamed' if stream else 'plain'} chat completion, {ANSWER_TOKENS}-token answer"
              f"{' (one event per token)' if stream else ''}; {len(direct['total'])} sequential calls per target,"
              f" throughput with {args.concurrency} callers")
        head = f"{'target':<30}{'p50 ms':>9}{'p99 ms':>9}{'+p50 ms':>9}{'+p99 ms':>9}"
        if stream:
            head += f"{'1st p50':>9}{'+1st p50':>9}"
        print(head + f"{'calls/s':>9}{'x direct':>9}")
        f50 = pct(direct["first"], 0.5)
        for name, r in by_target.items():
            p50, p99 = pct(r["total"], 0.5), pct(r["total"], 0.99)
            line = f"{name:<30}{p50 * 1e3:>9.2f}{p99 * 1e3:>9.2f}{(p50 - d50) * 1e3:>9.2f}{(p99 - d99) * 1e3:>9.2f}"
            if stream:
                first = pct(r["first"], 0.5)
                line += f"{first * 1e3:>9.2f}{(first - f50) * 1e3:>9.2f}"
            print(line + f"{r['rate']:>9.0f}{r['rate'] / direct['rate']:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=300, help="sequential calls per target and mode")
    parser.add_argument("--rounds", type=int, default=4, help="rounds the targets take turns in")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--load-calls", type=int, default=1200, help="calls per target and mode under load")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--no-collector", action="store_true", help="export spans to a dead endpoint instead")
    parser.add_argument("--no-litellm", action="store_true")
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return
    ps = Processes()
    try:
        targets = start_targets(ps, args)
        print(f"targets: {', '.join(targets)}; spans exported to "
              f"{'a dead endpoint (dropped)' if args.no_collector else 'a tracerl collector (embedded store)'}")
        results = asyncio.run(measure(targets, args))
    finally:
        ps.stop()
    report(results, args)


if __name__ == "__main__":
    main()
