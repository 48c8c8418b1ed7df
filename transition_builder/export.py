"""Where transitions go: the `tracerl_transitions` table, and files for offline use."""

from __future__ import annotations

import json
from datetime import timezone
from pathlib import Path

import orjson

from .transitions import COLUMNS, Transition

BUILD_COLUMNS = ("trace_id", "status", "reason", "transitions", "duplicate_spans", "orphans_repaired",
                 "double_recorded", "built_at")


def write_table(client, transitions: list[Transition], database: str) -> None:
    """One insert in Arrow format: pyarrow builds the id columns in C and ClickHouse reads them
    without parsing text (measured faster than JSONCompactEachRow and than clickhouse-connect's
    Native serialization of the same rows; bench/builder.py)."""
    if not transitions:
        return
    import pyarrow as pa

    schema = _arrow_schema(pa)
    columns = [pa.array([getattr(t, name) for t in transitions], type=schema.field(name).type) for name in COLUMNS]
    client.insert_arrow(f"`{database}`.`tracerl_transitions`", pa.Table.from_arrays(columns, schema=schema))


def write_build_log(client, rows: list[tuple], database: str) -> None:
    if rows:
        client.insert("tracerl_builds", rows, column_names=list(BUILD_COLUMNS), database=database)


def write_file(path: str | Path, transitions: list[Transition]) -> None:
    """``.parquet`` (pyarrow) or ``.jsonl``: one record per transition, the table's columns."""
    path = Path(path)
    if path.suffix == ".jsonl":
        with path.open("w") as f:
            for t in transitions:
                record = t.as_dict()
                record["built_at"] = record["built_at"].isoformat()
                f.write(json.dumps(record) + "\n")
        return
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = {name: [getattr(t, name) for t in transitions] for name in COLUMNS}
        pq.write_table(pa.table(columns, schema=_arrow_schema(pa)), path)
        return
    raise ValueError(f"--out {path}: expected a .parquet or .jsonl file")


def _arrow_schema(pa):
    ids = pa.list_(pa.uint32())
    return pa.schema([
        ("trace_id", pa.string()), ("step", pa.uint32()), ("group_id", pa.string()), ("task_id", pa.string()),
        ("attempt", pa.int64()), ("mode", pa.string()), ("agent", pa.string()), ("span_ids", pa.list_(pa.string())),
        ("prompt_ids", ids), ("response_ids", ids), ("response_mask", pa.list_(pa.uint8())),
        ("logprobs", pa.list_(pa.float32())), ("reward", pa.float64()), ("step_reward", pa.float64()),
        ("credit", pa.float64()), ("credit_strategy", pa.string()), ("flags", pa.list_(pa.string())),
        ("policy_version", pa.string()), ("built_at", pa.timestamp("ms", tz="UTC")),
    ])
