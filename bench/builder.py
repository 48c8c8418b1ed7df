"""Transition-builder throughput against reading the same spans, in one run on one chdb store.

    .venv/bin/python bench/builder.py                    # 10,000 traces x 8 LLM calls with token ids
    .venv/bin/python bench/builder.py --traces 1000 --prompt 256 --response 64

Makes a fresh embedded store in a temporary folder (this process owns it; run it where no
collector holds that folder), writes N rollouts shaped like tracerl's own traces (rollout root,
agent span, 8 chat spans whose prompts grow by the previous response and an observation, a
reward span), then times, on the same store:
  read   a plain SELECT of the same spans (the builder's span query, results fetched to Python);
  build  `tracerl.transition_builder.build` of every rollout: selection, span reads,
         reconstruction, credit, and the insert into tracerl_transitions and tracerl_builds;
  trajectory  the same with --aggregate trajectory (each rollout merges into one sample).
and prints traces/s for each and build/read as a ratio (the aim: at most 3x).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone

from tracerl import semconv

COLUMNS = ["Timestamp", "TraceId", "SpanId", "ParentSpanId", "TraceState", "SpanName", "SpanKind", "ServiceName",
           "ResourceAttributes", "ScopeName", "ScopeVersion", "SpanAttributes", "Duration", "StatusCode",
           "StatusMessage"]


def dumps(values) -> str:
    return json.dumps(values, separators=(",", ":"))


def rollout_rows(rng: random.Random, base: datetime, calls: int, prompt: int, response: int) -> list[list]:
    trace_id = uuid.uuid4().hex
    sid = lambda: "%016x" % rng.getrandbits(64)  # noqa: E731
    root, agent = sid(), sid()
    resource = {"service.name": "bench-agent"}

    def row(offset_ms, span_id, parent, name, kind, attrs, duration_ms):
        return [base + timedelta(milliseconds=offset_ms), trace_id, span_id, parent, "", name, kind, "bench-agent",
                resource, "tracerl", "", attrs, int(duration_ms * 1e6), "Unset", ""]

    task = f"task-{rng.randrange(500)}"
    rows = [row(0, root, "", semconv.SPAN_ROLLOUT, "Internal", {
        semconv.ROLLOUT_TASK_ID: task, semconv.ROLLOUT_GROUP_ID: task, semconv.ROLLOUT_ATTEMPT: "0",
        semconv.ROLLOUT_MODE: "train"}, 100 * calls + 20),
            row(1, agent, root, "invoke_agent solver", "Internal", {
                semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT, semconv.GEN_AI_AGENT_NAME: "solver"},
                100 * calls + 10)]
    context = [rng.randrange(32000) for _ in range(prompt)]
    for i in range(calls):
        out = [rng.randrange(32000) for _ in range(response)]
        attrs = {
            semconv.GEN_AI_OPERATION_NAME: semconv.OP_CHAT, semconv.GEN_AI_REQUEST_MODEL: "policy",
            semconv.GEN_AI_RESPONSE_ID: f"chatcmpl-{trace_id[:8]}-{i}",
            semconv.GEN_AI_INPUT_MESSAGES: dumps([{"role": "user", "parts": [{"type": "text", "content": "q" * 200}]}]),
            semconv.GEN_AI_OUTPUT_MESSAGES: dumps([{"role": "assistant", "parts": [{"type": "text", "content": "a" * 100}]}]),
            semconv.GEN_AI_USAGE_INPUT_TOKENS: str(len(context)), semconv.GEN_AI_USAGE_OUTPUT_TOKENS: str(response),
            semconv.LLM_PROMPT_TOKEN_IDS: dumps(context), semconv.LLM_RESPONSE_TOKEN_IDS: dumps(out),
            semconv.LLM_RESPONSE_LOGPROBS: dumps([round(-rng.random(), 4) for _ in out]),
        }
        rows.append(row(2 + 100 * i, sid(), agent, "chat policy", "Client", attrs, 90))
        context = context + out + [rng.randrange(32000) for _ in range(16)]  # observation tokens
    rows.append(row(100 * calls + 15, sid(), root, semconv.SPAN_REWARD, "Internal", {
        semconv.REWARD_VALUE: str(rng.random()), semconv.REWARD_NAME: semconv.REWARD_PRIMARY}, 0))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=8, help="LLM calls per trace")
    parser.add_argument("--prompt", type=int, default=128, help="prompt token ids of the first call")
    parser.add_argument("--response", type=int, default=32, help="response token ids per call")
    parser.add_argument("--store", default=None, help="folder for the embedded store (default: a temp folder)")
    args = parser.parse_args()

    import clickhouse_connect

    from tracerl.store import ensure_schema, ensure_tracerl_schema
    from tracerl.store.queries import named_query
    from tracerl.transition_builder import build

    folder = args.store or os.path.join(tempfile.mkdtemp(prefix="tracerl-bench-builder-"), "store")
    client = clickhouse_connect.get_client(dsn=f"chdb://{folder}")
    ensure_schema(client.command)
    ensure_tracerl_schema(client.command)

    rng = random.Random(7)
    base = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(hours=1)
    started = time.perf_counter()
    trace_ids, spans = [], 0
    for chunk in range(0, args.traces, 1000):
        rows = []
        for _ in range(min(1000, args.traces - chunk)):
            made = rollout_rows(rng, base, args.calls, args.prompt, args.response)
            trace_ids.append(made[0][1])
            rows += made
        spans += len(rows)
        client.insert("otel_traces", rows, column_names=COLUMNS)
    print(f"wrote {args.traces} traces, {spans} spans ({args.calls} LLM calls each, prompts from "
          f"{args.prompt} ids, {args.response} response ids) in {time.perf_counter() - started:.1f}s")

    query = named_query("builder_trace_spans")
    started = time.perf_counter()
    read_rows = 0
    for i in range(0, len(trace_ids), 2000):
        read_rows += len(client.query(query, parameters={"trace_ids": trace_ids[i:i + 2000]}).result_rows)
    read_s = time.perf_counter() - started
    assert read_rows == spans, (read_rows, spans)

    started = time.perf_counter()
    result = build(client)
    build_s = time.perf_counter() - started
    assert result.report.built == args.traces, result.report.summary()

    started = time.perf_counter()
    merged = build(client, rebuild=True, aggregate="trajectory", write=True)
    trajectory_s = time.perf_counter() - started
    assert len(merged.transitions) == args.traces
    print("build, per stage:", result.report.summary().splitlines()[-1].removeprefix("time: "))

    print(f"read   (plain SELECT of the same spans): {read_s:7.2f}s  {args.traces / read_s:8.0f} traces/s")
    print(f"build  (transition per call, written):   {build_s:7.2f}s  {args.traces / build_s:8.0f} traces/s"
          f"  {len(result.transitions)} transitions  ratio to read {build_s / read_s:.2f}x")
    print(f"build  (trajectory, rebuild, written):   {trajectory_s:7.2f}s  {args.traces / trajectory_s:8.0f} traces/s"
          f"  {len(merged.transitions)} transitions  ratio to read {trajectory_s / read_s:.2f}x")


if __name__ == "__main__":
    main()
