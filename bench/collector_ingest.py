"""Collector ingest throughput: spans/s and MB/s through OTLP/gRPC and OTLP/HTTP with several
concurrent exporter processes, next to raw inserts of the same rows straight into chdb.

    python bench/collector_ingest.py                       # starts its own collector, both protocols
    python bench/collector_ingest.py --endpoint 127.0.0.1:4317 --protocol grpc   # any OTLP receiver

Payloads are made before timing with the OpenTelemetry SDK's own OTLP encoder (the bytes an
OTel exporter sends), so the load generator measures the receiver, not span creation. Each
exporter process sends its requests one after another and waits for each acknowledgement, as an
SDK exporter does. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from urllib.parse import urlsplit

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


# --- payloads ---------------------------------------------------------------------------------

def make_payloads(kind: str, n_spans: int, batch: int, seed: int) -> list[bytes]:
    """Serialized ExportTraceServiceRequests of ``batch`` spans each, from real SDK spans."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    rng = random.Random(seed)
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": f"bench-{kind}"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench", "1.0")
    message = json.dumps([{"role": "user", "content": "x" * 3900}])  # ~4 KB of messages
    payloads = []
    for start in range(0, n_spans, batch):
        memory.clear()
        for i in range(start, min(start + batch, n_spans)):
            with tracer.start_as_current_span("chat tiny" if kind == "llm" else "tool call") as span:
                span.set_attribute("gen_ai.operation.name", "chat" if kind == "llm" else "execute_tool")
                span.set_attribute("gen_ai.request.model", "tiny")
                span.set_attribute("tracerl.rollout.attempt", i % 4)
                span.set_attribute("score", 0.5)
                span.set_attribute("ok", True)
                if kind == "llm":
                    span.set_attribute("gen_ai.input.messages", message)
                    span.set_attribute("tracerl.llm.prompt_token_ids", [rng.randrange(50_000) for _ in range(600)])
                    span.set_attribute("tracerl.llm.response_token_ids", [rng.randrange(50_000) for _ in range(200)])
                    span.set_attribute("tracerl.llm.response_logprobs", [-rng.random() * 3 for _ in range(200)])
        payloads.append(encode_spans(memory.get_finished_spans()).SerializeToString())
    return payloads


# --- exporter processes -----------------------------------------------------------------------

def _send_grpc(endpoint: str, payloads: list[bytes]) -> None:
    import grpc

    with grpc.insecure_channel(endpoint, options=[("grpc.max_send_message_length", 64 << 20)]) as channel:
        export = channel.unary_unary(EXPORT, request_serializer=None, response_deserializer=None)
        for body in payloads:
            export(body, timeout=60)


def _send_http(url: str, payloads: list[bytes]) -> None:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    for body in payloads:
        conn.request("POST", parts.path, body, {"Content-Type": "application/x-protobuf"})
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"export answered {response.status}")
    conn.close()


def _exporter(protocol, endpoint, kind, n_spans, batch, seed, barrier, results):
    payloads = make_payloads(kind, n_spans, batch, seed)
    barrier.wait()
    start = time.perf_counter()
    (_send_grpc if protocol == "grpc" else _send_http)(endpoint, payloads)
    results.put((start, time.perf_counter(), n_spans, sum(map(len, payloads))))


def drive(protocol: str, endpoint: str, kind: str, n_spans: int, processes: int, batch: int) -> dict:
    """Run ``processes`` exporter processes against ``endpoint``; spans/s and MB/s overall."""
    ctx = mp.get_context("fork")
    barrier, results = ctx.Barrier(processes + 1), ctx.Queue()
    per = n_spans // processes
    procs = [ctx.Process(target=_exporter, args=(protocol, endpoint, kind, per, batch, 1000 * i + len(kind), barrier, results))
             for i in range(processes)]
    for p in procs:
        p.start()
    barrier.wait()  # every process has its payloads ready
    done = [results.get() for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode:
            raise RuntimeError(f"an exporter process failed with exit code {p.exitcode}")
    elapsed = max(d[1] for d in done) - min(d[0] for d in done)
    spans, size = sum(d[2] for d in done), sum(d[3] for d in done)
    return {"spans": spans, "seconds": elapsed, "spans_s": spans / elapsed, "mb_s": size / elapsed / 1e6,
            "bytes_per_span": size / spans}


# --- raw inserts, the baseline ----------------------------------------------------------------

def raw_baseline(kind: str, n_spans: int, batch: int, store: str) -> dict:
    """Insert the same rows straight into chdb, three ways: the engine's bulk JSONEachRow insert in
    one statement (the ceiling any writer can reach), one statement per export request (a writer
    without group commit), and clickhouse-connect's insert of Python rows (what a script writing
    rows itself would do). Runs in a child process: chdb opens one path per process."""
    code = f"""
import json, time, sys
sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})
import orjson, clickhouse_connect
from bench.collector_ingest import make_payloads
from tracerl.collector.otlp import INSERT_COLUMNS, parse_protobuf, to_rows
from tracerl.store import ensure_schema
payloads = make_payloads({kind!r}, {n_spans}, {batch}, 7)
blocks = [to_rows(parse_protobuf(p))[0] for p in payloads]
client = clickhouse_connect.get_client(dsn="chdb://{store}")
ensure_schema(client.command)
cols = ", ".join(f"`{{c}}`" for c in INSERT_COLUMNS)
data = b"[" + b",".join(b[1:-1] for b in blocks) + b"]"
t = time.perf_counter()
client.raw_insert("otel_traces", column_names=list(INSERT_COLUMNS), insert_block=data, fmt="JSONEachRow")
bulk = time.perf_counter() - t
t = time.perf_counter()
for b in blocks:  # one statement per export request, as a collector without group commit would
    client.raw_insert("otel_traces", column_names=list(INSERT_COLUMNS), insert_block=b, fmt="JSONEachRow")
per_request = time.perf_counter() - t
rows = []
for b in blocks:
    for r in orjson.loads(b):
        rows.append([r.get(c, []) if c.startswith(("Events.", "Links.")) else r[c] for c in INSERT_COLUMNS])
import datetime as dt
for r in rows:
    r[0] = dt.datetime.fromtimestamp(float(r[0]), dt.timezone.utc)
    r[15] = [dt.datetime.fromtimestamp(float(x), dt.timezone.utc) for x in r[15]]
t = time.perf_counter()
for i in range(0, len(rows), 20000):
    client.insert("otel_traces", rows[i:i + 20000], column_names=list(INSERT_COLUMNS))
rowwise = time.perf_counter() - t
n = client.command("SELECT count() FROM otel_traces")
print(json.dumps({{"bulk_s": {n_spans} / bulk, "client_s": {n_spans} / rowwise,
                  "per_request_s": {n_spans} / per_request, "stored": n}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- a collector to drive ---------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_collector(store: str):
    ports = {name: _free_port() for name in ("grpc", "http", "query")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracerl.cli", "collector", "--store", f"chdb://{store}",
         "--grpc", f"127.0.0.1:{ports['grpc']}", "--http", f"127.0.0.1:{ports['http']}",
         "--query", f"127.0.0.1:{ports['query']}", "--log-level", "WARNING", "--max-body-mb", "256"],
        stderr=open(store + ".log", "w"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{ports['query']}/ping", timeout=1)
            if os.path.exists(store + ".owner.json"):
                return proc, ports
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("collector did not start")


def stored(ports, kind: str) -> int:
    q = urllib.parse.quote(f"SELECT count() FROM otel_traces WHERE ServiceName = 'bench-{kind}'")
    with urllib.request.urlopen(f"http://127.0.0.1:{ports['query']}/?query={q}") as r:
        return int(r.read())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--endpoint", help="drive this OTLP receiver (host:port for gRPC, URL for HTTP) "
                                       "instead of starting a collector")
    ap.add_argument("--protocol", choices=["grpc", "http", "both"], default="both")
    ap.add_argument("--kind", choices=["small", "llm", "both"], default="both")
    ap.add_argument("--small-spans", type=int, default=200_000)
    ap.add_argument("--llm-spans", type=int, default=8_000)
    ap.add_argument("--processes", default="4,16",
                    help="concurrent exporter processes; a comma-separated list runs each (default 4,16)")
    ap.add_argument("--batch", type=int, default=512, help="spans per export request (the SDK's default)")
    args = ap.parse_args()

    kinds = ["small", "llm"] if args.kind == "both" else [args.kind]
    protocols = ["grpc", "http"] if args.protocol == "both" else [args.protocol]
    if args.endpoint and len(protocols) != 1:
        ap.error("--endpoint needs --protocol grpc or http")
    process_counts = [int(p) for p in str(args.processes).split(",")]
    print(f"machine: {os.cpu_count()} cores; {args.batch} spans per export request")
    tmp = tempfile.mkdtemp(prefix="tracerl-bench-")
    try:
        for kind in kinds:
            n = args.small_spans if kind == "small" else args.llm_spans
            raw = raw_baseline(kind, n, args.batch, os.path.join(tmp, f"raw-{kind}"))
            print(f"\n{kind} spans ({n:,})")
            print(f"  raw chdb bulk insert (pre-serialized JSONEachRow, one statement): {raw['bulk_s']:>10,.0f} spans/s")
            print(f"  raw chdb insert per request ({args.batch} rows per statement):          {raw['per_request_s']:>10,.0f} spans/s")
            print(f"  raw clickhouse-connect insert (Python rows, 20k per insert):      {raw['client_s']:>10,.0f} spans/s")
            for protocol, processes in [(p, n) for p in protocols for n in process_counts]:
                if args.endpoint:
                    result = drive(protocol, args.endpoint, kind, n, processes, args.batch)
                    check = ""
                else:
                    store = os.path.join(tmp, f"collector-{kind}-{protocol}-{processes}")
                    proc, ports = start_collector(store)
                    try:
                        endpoint = (f"127.0.0.1:{ports['grpc']}" if protocol == "grpc"
                                    else f"http://127.0.0.1:{ports['http']}/v1/traces")
                        result = drive(protocol, endpoint, kind, n, processes, args.batch)
                        check = f"  stored {stored(ports, kind):,}/{result['spans']:,}"
                    finally:
                        proc.terminate()
                        proc.wait(60)
                    summary = [ln for ln in open(store + ".log") if "stopped (" in ln]
                    check += "\n      " + (summary[0].strip().split("stopped ")[-1] if summary else "")
                print(f"  collector OTLP/{protocol:<4} {processes:>2} exporters {result['spans_s']:>9,.0f} spans/s "
                      f"{result['mb_s']:>6.1f} MB/s ({result['bytes_per_span']:,.0f} B/span on the wire)"
                      f"  collector/raw: bulk {result['spans_s'] / raw['bulk_s']:.2f},"
                      f" per-request {result['spans_s'] / raw['per_request_s']:.2f},"
                      f" client {result['spans_s'] / raw['client_s']:.2f}{check}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
