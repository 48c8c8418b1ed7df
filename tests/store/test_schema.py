"""The store's schema is the contrib ClickHouse exporter's, checked in ClickHouse's own system
tables; creation is idempotent; names and TTL are configurable."""

import pytest

from tracerl.store import schema_statements
from tracerl.store.schema import ttl_interval

# The contrib exporter's traces table (bloom-filter variant), column by column.
CONTRIB_COLUMNS = [
    ("Timestamp", "DateTime64(9)", "CODEC(Delta(8), ZSTD(1))"),
    ("TraceId", "String", "CODEC(ZSTD(1))"),
    ("SpanId", "String", "CODEC(ZSTD(1))"),
    ("ParentSpanId", "String", "CODEC(ZSTD(1))"),
    ("TraceState", "String", "CODEC(ZSTD(1))"),
    ("SpanName", "LowCardinality(String)", "CODEC(ZSTD(1))"),
    ("SpanKind", "LowCardinality(String)", "CODEC(ZSTD(1))"),
    ("ServiceName", "LowCardinality(String)", "CODEC(ZSTD(1))"),
    ("ResourceAttributes", "Map(LowCardinality(String), String)", "CODEC(ZSTD(1))"),
    ("ScopeName", "String", "CODEC(ZSTD(1))"),
    ("ScopeVersion", "String", "CODEC(ZSTD(1))"),
    ("SpanAttributes", "Map(LowCardinality(String), String)", "CODEC(ZSTD(1))"),
    ("Duration", "UInt64", "CODEC(T64, ZSTD(1))"),
    ("StatusCode", "LowCardinality(String)", "CODEC(ZSTD(1))"),
    ("StatusMessage", "String", "CODEC(ZSTD(1))"),
    ("Events.Timestamp", "Array(DateTime64(9))", "CODEC(ZSTD(1))"),
    ("Events.Name", "Array(LowCardinality(String))", "CODEC(ZSTD(1))"),
    ("Events.Attributes", "Array(Map(LowCardinality(String), String))", "CODEC(ZSTD(1))"),
    ("Links.TraceId", "Array(String)", "CODEC(ZSTD(1))"),
    ("Links.SpanId", "Array(String)", "CODEC(ZSTD(1))"),
    ("Links.TraceState", "Array(String)", "CODEC(ZSTD(1))"),
    ("Links.Attributes", "Array(Map(LowCardinality(String), String))", "CODEC(ZSTD(1))"),
    ("ResourceAttributeItems", "Array(String)", ""),
    ("SpanAttributeItems", "Array(String)", ""),
]
CONTRIB_INDEXES = {
    "idx_trace_id": ("bloom_filter(0.001)", "TraceId", 1),
    "idx_res_attr_key": ("bloom_filter(0.01)", "mapKeys(ResourceAttributes)", 1),
    "idx_res_attr_value": ("bloom_filter(0.01)", "mapValues(ResourceAttributes)", 1),
    "idx_span_attr_key": ("bloom_filter(0.01)", "mapKeys(SpanAttributes)", 1),
    "idx_span_attr_value": ("bloom_filter(0.01)", "mapValues(SpanAttributes)", 1),
    "idx_duration": ("minmax", "Duration", 1),
    "idx_lower_span_name": ("tokenbf_v1(32768, 3, 0)", "lower(SpanName)", 8),
}


def table_info(collector, database, table):
    (info,) = collector.rows(
        "SELECT engine, partition_key, sorting_key, primary_key, create_table_query FROM system.tables "
        "WHERE database = {d:String} AND name = {t:String}", d=database, t=table)
    return info


def test_otel_traces_matches_the_contrib_exporter(collector):
    columns = collector.rows(
        "SELECT name, type, compression_codec, default_kind FROM system.columns "
        "WHERE database = 'default' AND table = 'otel_traces' ORDER BY position")
    assert [(c["name"], c["type"], c["compression_codec"]) for c in columns] == CONTRIB_COLUMNS
    assert {c["name"] for c in columns if c["default_kind"] == "ALIAS"} == {"ResourceAttributeItems", "SpanAttributeItems"}

    indexes = collector.rows("SELECT name, type_full, expr, granularity FROM system.data_skipping_indices "
                             "WHERE database = 'default' AND table = 'otel_traces'")
    assert {i["name"]: (i["type_full"], i["expr"], i["granularity"]) for i in indexes} == CONTRIB_INDEXES

    info = table_info(collector, "default", "otel_traces")
    assert info["engine"] == "MergeTree"
    assert info["partition_key"] == "toDate(Timestamp)"
    assert info["primary_key"] == "ServiceName, SpanName, toDateTime(Timestamp)"
    assert info["sorting_key"] == "ServiceName, SpanName, toDateTime(Timestamp), Timestamp"
    assert "SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1" in info["create_table_query"]
    assert "TTL" not in info["create_table_query"]


def test_trace_id_lookup_table_and_view(collector):
    info = table_info(collector, "default", "otel_traces_trace_id_ts")
    assert info["engine"] == "AggregatingMergeTree"
    assert info["partition_key"] == "toStartOfWeek(Start)" and info["sorting_key"] == "(TraceId)"
    columns = collector.rows("SELECT name, type FROM system.columns WHERE database = 'default' "
                             "AND table = 'otel_traces_trace_id_ts' ORDER BY position")
    assert [(c["name"], c["type"]) for c in columns] == [
        ("TraceId", "String"), ("Start", "SimpleAggregateFunction(min, DateTime)"),
        ("End", "SimpleAggregateFunction(max, DateTime)")]
    view = table_info(collector, "default", "otel_traces_trace_id_ts_mv")
    assert view["engine"] == "MaterializedView"
    assert "TO default.otel_traces_trace_id_ts" in view["create_table_query"]


def test_schema_creation_is_idempotent(collector):
    client = collector.client()
    before = collector.rows("SELECT name, create_table_query FROM system.tables WHERE database = 'default' "
                            "AND name LIKE 'otel_traces%' ORDER BY name")
    for statement in schema_statements():
        client.command(statement)
    after = collector.rows("SELECT name, create_table_query FROM system.tables WHERE database = 'default' "
                           "AND name LIKE 'otel_traces%' ORDER BY name")
    assert before == after and len(after) == 3


def test_database_table_and_ttl_are_configurable(make_collector, tmp_path):
    store = tmp_path / "named"
    collector = make_collector("--database", "obs", "--traces-table", "spans", "--ttl", "72h", store_dir=store)
    names = {r["name"] for r in collector.rows("SELECT name FROM system.tables WHERE database = 'obs'")}
    assert {"spans", "spans_trace_id_ts", "spans_trace_id_ts_mv"} <= names
    assert "TTL toDateTime(Timestamp) + toIntervalHour(72)" in table_info(collector, "obs", "spans")["create_table_query"]
    assert "TTL toDateTime(Start) + toIntervalHour(72)" in table_info(collector, "obs", "spans_trace_id_ts")["create_table_query"]
    # Restarting on the same store runs the DDL again without complaint.
    collector.stop()
    again = make_collector("--database", "obs", "--traces-table", "spans", "--ttl", "72h", store_dir=store)
    assert again.rows("SELECT count() AS n FROM system.tables WHERE database = 'obs' AND name LIKE 'spans%'") == [{"n": 3}]


@pytest.mark.parametrize("ttl,expected", [("72h", "toIntervalHour(72)"), ("30d", "toIntervalDay(30)"),
                                          ("15m", "toIntervalMinute(15)"), ("90 s", "toIntervalSecond(90)")])
def test_ttl_interval(ttl, expected):
    assert ttl_interval(ttl) == expected


@pytest.mark.parametrize("bad", ["3 weeks", "h", "-1d", "1.5h"])
def test_bad_ttl_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="TTL"):
        ttl_interval(bad)


def test_identifiers_are_checked():
    with pytest.raises(ValueError, match="table 'otel; DROP'"):
        schema_statements(table="otel; DROP")
