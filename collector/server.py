"""The collector process: receivers, the writer, the store and (for an embedded store) the query
endpoint, started and stopped in the right order."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass

from tracerl._net import is_loopback as _is_loopback
from tracerl._net import split_hostport
from tracerl.store import DEFAULT_TRACES_TABLE, ensure_schema, ensure_tracerl_schema, resolve_dsn
from tracerl.store.engine import open_engine
from tracerl.store.owner import OwnerInfo, remove_owner, write_owner

from .grpc_receiver import start_grpc_receiver
from .http_receiver import start_http_receiver
from .ingest import Ingest
from .otlp import INSERT_COLUMNS
from .query_endpoint import start_query_endpoint
from .writer import BatchWriter

log = logging.getLogger("tracerl.collector")


@dataclass
class CollectorConfig:
    store: str | None = None  # DSN; default $TRACERL_STORE or ./.tracerl/store
    grpc: str | None = "127.0.0.1:4317"  # None or "" disables
    http: str | None = "127.0.0.1:4318"
    query: str | None = "127.0.0.1:8123"  # embedded stores only
    database: str | None = None  # default: the DSN's database ("default" for chdb)
    traces_table: str = DEFAULT_TRACES_TABLE
    ttl: str | None = None
    token: str = ""
    max_body_bytes: int = 32 << 20
    max_inflight: int = 64
    max_batch_rows: int = 100_000
    linger_ms: float = 20.0  # longest wait for requests still decoding to join a batch
    writer_threads: int = 1


class Collector:
    def __init__(self, config: CollectorConfig):
        self.config = config
        self.dsn = resolve_dsn(config.store)
        self.grpc_port = self.http_port = self.query_port = 0
        self._grpc = self._http = self._query = None
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()

    def start(self) -> "Collector":
        c = self.config
        # Validate addresses before touching the store.
        grpc_addr = split_hostport(c.grpc, "--grpc") if c.grpc else None
        http_addr = split_hostport(c.http, "--http") if c.http else None
        query_addr = split_hostport(c.query, "--query") if (c.query and self.dsn.embedded) else None
        exposed = [f"{h}:{p}" for h, p in filter(None, (grpc_addr, http_addr, query_addr))
                   if not _is_loopback(h)]
        if exposed and not c.token:
            log.warning("listening beyond loopback on %s without a token: anyone who can reach it "
                        "can write spans and run SQL; set --token", ", ".join(exposed))
        database = c.database or self.dsn.database
        self.engine = open_engine(self.dsn)
        ensure_schema(self.engine.execute, database, c.traces_table, c.ttl)
        ensure_tracerl_schema(self.engine.execute, database, c.traces_table)
        columns = ", ".join(f"`{name}`" for name in INSERT_COLUMNS)
        statement = f"INSERT INTO `{database}`.`{c.traces_table}` ({columns})"
        self.writer = BatchWriter(self.engine, statement, max_batch_rows=c.max_batch_rows,
                                  linger_s=c.linger_ms / 1000, threads=c.writer_threads)
        self.ingest = Ingest(self.writer, max_inflight=c.max_inflight, token=c.token,
                             max_body_bytes=c.max_body_bytes)
        try:
            if grpc_addr:
                self._grpc, self.grpc_port = start_grpc_receiver(self.ingest, *grpc_addr)
            if http_addr:
                self._http = start_http_receiver(self.ingest, *http_addr)
                self.http_port = self._http.server_address[1]
                self._serve(self._http, "otlp-http")
            if query_addr:
                self._query = start_query_endpoint(self.engine, *query_addr, token=c.token)
                self.query_port = self._query.server_address[1]
                self._serve(self._query, "query")
        except Exception:
            self.stop()
            raise
        if self.dsn.embedded:
            write_owner(self.dsn.path, OwnerInfo(
                pid=os.getpid(),
                query_url=f"http://{_client_host(query_addr[0])}:{self.query_port}" if query_addr else "",
                otlp_grpc=f"{_client_host(grpc_addr[0])}:{self.grpc_port}" if grpc_addr else "",
                otlp_http=f"http://{_client_host(http_addr[0])}:{self.http_port}" if http_addr else "",
                token_required=bool(c.token),
            ))
        return self

    def _serve(self, server, name: str) -> None:
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                  name=f"tracerl-{name}", daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop accepting, finish in-flight exports and batches, release the store."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._http is not None:
            self._http.shutdown()  # stops accepting connections
            self._http.server_close()
        if self._grpc is not None:
            self._grpc.stop(grace_s).wait(grace_s)  # refuses new RPCs, waits for running ones
        if hasattr(self, "ingest") and not self.ingest.close(timeout=grace_s):
            log.warning("exports still running after %.0fs; stopping anyway", grace_s)
        if hasattr(self, "writer"):
            self.writer.close(timeout=grace_s)
        if self._query is not None:
            self._query.shutdown()
            self._query.server_close()
        if self.dsn.embedded:
            remove_owner(self.dsn.path)
        if hasattr(self, "engine"):
            self.engine.close()

    def summary(self) -> str:
        parts = []
        if self.grpc_port:
            parts.append(f"OTLP/gRPC {self.config.grpc.rpartition(':')[0]}:{self.grpc_port}")
        if self.http_port:
            parts.append(f"OTLP/HTTP http://{self.config.http.rpartition(':')[0]}:{self.http_port}/v1/traces")
        if self.query_port:
            parts.append(f"queries http://{self.config.query.rpartition(':')[0]}:{self.query_port}")
        return f"tracerl collector: store {self.dsn}; " + "; ".join(parts)


def _client_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
