"""`tracerl collector`: run the OTLP collector in the foreground until SIGTERM or Ctrl-C."""

from __future__ import annotations

from typing import Optional

import typer


def collector(
    store: Optional[str] = typer.Option(None, "--store", envvar="TRACERL_STORE",
                                        help="Store DSN: chdb:///abs/path (embedded, default ./.tracerl/store) "
                                             "or http(s)://[user:pass@]host:port[/db] (a ClickHouse server)."),
    grpc: str = typer.Option("127.0.0.1:4317", help="OTLP/gRPC listen address; '' to disable."),
    http: str = typer.Option("127.0.0.1:4318", help="OTLP/HTTP listen address (POST /v1/traces); '' to disable."),
    query: str = typer.Option("127.0.0.1:8123", help="ClickHouse-compatible query endpoint for an embedded "
                                                     "store; '' to disable."),
    database: Optional[str] = typer.Option(None, help="Database of the traces table (default: the DSN's, "
                                                      "else 'default')."),
    traces_table: str = typer.Option("otel_traces", help="Traces table name (as the contrib exporter's "
                                                         "traces_table_name)."),
    ttl: Optional[str] = typer.Option(None, help="Drop spans older than this, e.g. 72h or 30d (default: keep)."),
    token: str = typer.Option("", envvar="TRACERL_TOKEN", help="Bearer token required by the receivers and "
                                                               "for writes on the query endpoint."),
    max_body_mb: float = typer.Option(32.0, help="Largest accepted export, in MiB (after decompression)."),
    max_inflight: int = typer.Option(64, help="Exports processed at once; more get 429 / RESOURCE_EXHAUSTED."),
    writer_threads: int = typer.Option(1, help="Inserts running side by side (each insert has a fixed latency)."),
    linger_ms: float = typer.Option(20.0, help="Longest wait for exports still being decoded to join a batch."),
    log_level: str = typer.Option("INFO", help="Python log level."),
) -> None:
    """Receive OTLP traces (gRPC and HTTP) and write them into ClickHouse.

    An export is acknowledged only after its spans are stored. SIGTERM or Ctrl-C stops accepting,
    finishes running exports and batches, and exits 0.
    """
    import logging
    import signal
    import threading

    from tracerl.store import StoreError

    from .server import Collector, CollectorConfig

    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    config = CollectorConfig(
        store=store, grpc=grpc or None, http=http or None, query=query or None, database=database,
        traces_table=traces_table, ttl=ttl, token=token, max_body_bytes=int(max_body_mb * (1 << 20)),
        max_inflight=max_inflight, writer_threads=writer_threads, linger_ms=linger_ms,
    )
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        server = Collector(config).start()
    except (StoreError, ValueError, OSError) as exc:
        typer.echo(f"tracerl collector: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(server.summary(), err=True)
    while not stop.wait(0.5):
        pass
    typer.echo("tracerl collector: stopping", err=True)
    server.stop()
    w = server.writer.stats
    typer.echo(f"tracerl collector: stopped ({w.rows} spans in {w.batches} inserts; {w.insert_seconds:.1f}s "
               f"inserting, {server.ingest.decode_seconds:.1f} thread-seconds decoding)", err=True)
