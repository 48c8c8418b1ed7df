"""Microseconds the instrumentation adds to one ``chat.completions.create`` call.

The openai client talks to an in-process transport (``MockTransport``: no network, no server), so
what is measured is the client's own cost plus the instrumentation's. Each configuration runs in
a fresh subprocess (instrumentors patch the client process-wide and a process has one tracer
provider), with a ``BatchSpanProcessor`` to an exporter that discards, as in production:

- ``none``: the client alone (the baseline every ratio is against);
- ``bare-span``: one empty OpenTelemetry span around the call (the floor any tracing pays);
- ``tracerl``: tracerl's instrumentor with token capture on, its redaction and drop-counting
  exporter wrappers;
- ``openllmetry``: ``opentelemetry-instrumentation-openai``;
- ``openinference``: ``openinference-instrumentation-openai``.

The reply carries vLLM's ``prompt_token_ids``, ``token_ids`` and ``logprobs.content`` so that an
instrumentor which records them pays for it. Peers need the ``bench`` extra (README):

    .venv-bench/bin/python bench/sdk_overhead.py [--calls 2000] [--repeat 5]

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

MODES = ["none", "bare-span", "tracerl", "openllmetry", "openinference"]
PROMPT_TOKENS = 200
RESPONSE_TOKENS = 100


def reply_body() -> bytes:
    """One vLLM-style chat completion with token ids and logprobs."""
    content = " ".join(f"w{i}" for i in range(RESPONSE_TOKENS))
    return json.dumps({
        "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "policy",
        "prompt_token_ids": list(range(PROMPT_TOKENS)),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content},
                     "token_ids": list(range(1000, 1000 + RESPONSE_TOKENS)),
                     "logprobs": {"content": [{"token": f"w{i}", "logprob": -0.1, "bytes": [119], "top_logprobs": []}
                                              for i in range(RESPONSE_TOKENS)]}}],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": RESPONSE_TOKENS, "total_tokens": 300},
    }).encode()


def make_client():
    import openai

    try:
        import httpx2 as httpx  # openai >= 3 ships its own httpx fork
    except ImportError:
        import httpx
    body = reply_body()

    def handler(request):
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    return openai.OpenAI(api_key="bench", base_url="http://bench.invalid/v1", max_retries=0,
                         http_client=httpx.Client(transport=httpx.MockTransport(handler)))


class Discard:
    """A span exporter that drops everything (export cost is not what is measured)."""

    def export(self, spans):
        from opentelemetry.sdk.trace.export import SpanExportResult

        self.last = spans[-1] if spans else None
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass

    def force_flush(self, timeout_millis=30000):
        return True


def setup(mode: str):
    """Returns (call wrapper or None, the in-memory exporter that sees one span per call)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if mode == "none":
        return None, None
    provider = TracerProvider()
    memory = InMemorySpanExporter()  # for the "what was captured" column only, detached before timing
    if mode == "tracerl":
        from tracerl import config
        from tracerl.export import GuardedSpanExporter
        from tracerl.instrumentations.openai import OpenAIInstrumentor
        from tracerl.redaction import RedactingSpanExporter, build_redactor

        config.set_capture_tokens(True)
        provider.add_span_processor(BatchSpanProcessor(RedactingSpanExporter(GuardedSpanExporter(Discard()), build_redactor(True))))
        OpenAIInstrumentor().instrument(tracer_provider=provider)
    elif mode == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        provider.add_span_processor(BatchSpanProcessor(Discard()))
        OpenAIInstrumentor().instrument(tracer_provider=provider)
    elif mode == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        provider.add_span_processor(BatchSpanProcessor(Discard()))
        OpenAIInstrumentor().instrument(tracer_provider=provider)
    elif mode == "bare-span":
        provider.add_span_processor(BatchSpanProcessor(Discard()))
        tracer = provider.get_tracer("bench")

        def wrap(call):
            def traced():
                with tracer.start_as_current_span("chat policy"):
                    return call()
            return traced
        memory_proc = SimpleSpanProcessor(memory)
        provider.add_span_processor(memory_proc)
        return wrap, (memory, memory_proc, provider)
    memory_proc = SimpleSpanProcessor(memory)
    provider.add_span_processor(memory_proc)
    trace.set_tracer_provider(provider)
    return None, (memory, memory_proc, provider)


def worker(mode: str, calls: int, repeat: int) -> dict:
    wrap, probe = setup(mode)
    client = make_client()
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say something."}]

    def call():
        return client.chat.completions.create(model="policy", messages=messages, temperature=0.7)

    fn = wrap(call) if wrap else call
    captured = {}
    fn()
    if probe is not None:
        memory, memory_proc, provider = probe
        spans = memory.get_finished_spans()
        if spans:
            attrs = dict(spans[-1].attributes or {})
            captured = {"attributes": len(attrs),
                        "token_ids": any("token_ids" in k for k in attrs),
                        "logprobs": any("logprob" in k for k in attrs)}
        # stop feeding the in-memory exporter before timing
        multi = provider._active_span_processor
        multi._span_processors = tuple(p for p in multi._span_processors if p is not memory_proc)
    for _ in range(min(300, calls)):
        fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return {"mode": mode, "us": statistics.median(runs), "runs": runs, "captured": captured}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.calls, args.repeat)))
        return
    results = {}
    for mode in args.modes.split(","):
        proc = subprocess.run([sys.executable, __file__, "--worker", mode, "--calls", str(args.calls),
                               "--repeat", str(args.repeat)], capture_output=True, text=True)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{mode:14s} unavailable: {last}")
            continue
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    base = results.get("none")
    print(f"\nchat.completions.create through MockTransport, {args.calls} calls x {args.repeat}, median per call"
          f" (reply: {PROMPT_TOKENS} prompt ids, {RESPONSE_TOKENS} response ids + logprobs)\n")
    print(f"{'mode':14s} {'us/call':>9s} {'added us':>9s} {'ratio':>7s}  captured")
    for mode, r in results.items():
        added = r["us"] - base["us"] if base else float("nan")
        ratio = r["us"] / base["us"] if base else float("nan")
        cap = r["captured"]
        what = (f"{cap['attributes']} attributes, token ids: {'yes' if cap['token_ids'] else 'no'}, "
                f"logprobs: {'yes' if cap['logprobs'] else 'no'}") if cap else "-"
        print(f"{mode:14s} {r['us']:9.1f} {added:9.1f} {ratio:7.2f}  {what}")


if __name__ == "__main__":
    main()
