"""clickhouse-connect's HTTP client against the collector's query endpoint, as against a server."""

import datetime as dt
import json
import secrets
import subprocess
import sys
import urllib.error
import urllib.request

import clickhouse_connect
import pytest
from clickhouse_connect.driver.exceptions import DatabaseError


def test_ping(collector):
    with urllib.request.urlopen(collector.query_url + "/ping") as r:
        assert r.read() == b"Ok.\n"


def test_query_with_parameters(collector):
    client = collector.client()
    result = client.query("SELECT {a:UInt32} + 1 AS n, {s:String} AS s, {xs:Array(String)} AS xs",
                          parameters={"a": 41, "s": "it's", "xs": ["a", "b"]})
    assert result.result_rows == [(42, "it's", ["a", "b"])]
    assert result.column_names == ("n", "s", "xs")
    assert client.command("SELECT 40 + 2") == 42


def test_query_df_and_insert(collector):
    client = collector.client()
    table = f"t_{secrets.token_hex(4)}"
    client.command(f"CREATE TABLE {table} (id UInt64, name String, score Float64, tags Array(String), "
                   f"at DateTime64(3), attrs Map(String, String)) ENGINE = MergeTree ORDER BY id")
    rows = [[i, f"n{i}", i / 4, [f"t{i}"], dt.datetime(2026, 1, 1, 0, i // 60, i % 60), {"k": str(i)}] for i in range(100)]
    summary = client.insert(table, rows, column_names=["id", "name", "score", "tags", "at", "attrs"])
    assert summary.written_rows in (0, 100)  # the endpoint does not count rows in its summary
    df = client.query_df(f"SELECT * FROM {table} ORDER BY id")
    assert len(df) == 100
    assert df["name"].tolist()[:3] == ["n0", "n1", "n2"]
    assert df["score"].sum() == pytest.approx(sum(i / 4 for i in range(100)))
    assert df["attrs"][7] == {"k": "7"}
    assert client.query(f"SELECT count() FROM {table} WHERE has(tags, 't5')").result_rows == [(1,)]
    # raw formats come back as ClickHouse produces them
    assert json.loads(client.raw_query(f"SELECT id FROM {table} ORDER BY id LIMIT 2", fmt="JSONEachRow")
                      .decode().splitlines()[1]) == {"id": 1}


def test_database_errors_are_clickhouse_errors(collector):
    client = collector.client()
    with pytest.raises(DatabaseError, match="UNKNOWN_TABLE|does not exist"):
        client.query("SELECT * FROM no_such_table_here")
    with pytest.raises(DatabaseError, match="Syntax error|SYNTAX_ERROR"):
        client.query("SELEC 1")
    assert client.command("SELECT 1") == 1  # still serving


def test_plain_http_query_by_url_and_body(collector):
    url = collector.query_url + "/?query=" + urllib.parse.quote("SELECT 1 + {x:UInt8} AS v FORMAT JSONEachRow") + "&param_x=2"
    with urllib.request.urlopen(url) as r:
        assert json.loads(r.read()) == {"v": 3}
        assert r.headers["X-ClickHouse-Format"] == "JSONEachRow"
    req = urllib.request.Request(collector.query_url + "/?default_format=CSV", data=b"SELECT 'a', 2", method="POST")
    with urllib.request.urlopen(req) as r:
        assert r.read() == b'"a",2\n'


def test_token_guards_writes_but_not_reads(make_collector):
    collector = make_collector("--token", "s3cret")
    anonymous = collector.client()
    assert anonymous.command("SELECT 7") == 7
    with pytest.raises(DatabaseError, match="AUTHENTICATION_FAILED|need the collector's token"):
        anonymous.command("CREATE TABLE guarded (a UInt8) ENGINE = Memory")
    authorized = collector.client(password="s3cret")
    authorized.command("CREATE TABLE guarded (a UInt8) ENGINE = Memory")
    authorized.insert("guarded", [[1], [2]], column_names=["a"])
    assert anonymous.query("SELECT sum(a) FROM guarded").result_rows == [(3,)]
    # Anonymous readers get ClickHouse's readonly mode: no table functions reaching files or URLs.
    with pytest.raises(DatabaseError, match="READONLY|readonly"):
        anonymous.query("SELECT * FROM file('/etc/hostname', 'LineAsString')")
    assert authorized.query("SELECT count() > 0 FROM file('/etc/hostname', 'LineAsString')").result_rows == [(True,)]


def test_into_outfile_is_refused(collector, tmp_path):
    target = tmp_path / "leak.txt"
    with pytest.raises(DatabaseError, match="INTO OUTFILE is not supported"):
        collector.client().query(f"SELECT 1 INTO OUTFILE '{target}'")
    assert not target.exists()


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "tracerl.cli", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def test_tracerl_sql_goes_through_the_owner(collector):
    """With a live collector owning the store, `tracerl sql` reaches it over the endpoint."""
    table = f"cli_{secrets.token_hex(4)}"
    collector.client().command(f"CREATE TABLE {table} (k String, v UInt8) ENGINE = MergeTree ORDER BY k")
    collector.client().insert(table, [["a", 1], ["b", 2]], column_names=["k", "v"])
    out = run_cli("sql", f"SELECT k, v FROM {table} ORDER BY k", "--store", collector.store_dsn, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert [json.loads(line) for line in out.stdout.splitlines()] == [{"k": "a", "v": 1}, {"k": "b", "v": 2}]
    out = run_cli("sql", f"SELECT k, v FROM {table} ORDER BY k", "--store", collector.store_dsn, "--format", "csv")
    assert out.stdout.splitlines() == ['"k","v"', '"a",1', '"b",2']
    out = run_cli("sql", f"SELECT k, v FROM {table} ORDER BY k", "--store", collector.store_dsn)
    assert "┃ k" in out.stdout and "│ b " in out.stdout and "2 rows" in out.stderr
    out = run_cli("sql", "SELECT * FROM nope", "--store", collector.store_dsn)
    assert out.returncode == 1 and "nope" in out.stderr


def test_tracerl_sql_opens_an_unowned_store_itself(tmp_path, make_collector):
    store = tmp_path / "owned-then-free"
    proc = make_collector(store_dir=store)
    proc.client().command("CREATE TABLE kept (a UInt8) ENGINE = MergeTree ORDER BY a")
    proc.client().insert("kept", [[5]], column_names=["a"])
    assert proc.stop() == 0
    out = run_cli("sql", "SELECT a FROM kept", "--store", f"chdb://{store}", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"a": 5}
    out = run_cli("sql", "SELECT 1", "--store", f"chdb://{tmp_path}/never-created")
    assert out.returncode == 2 and "no such folder" in out.stderr


def test_collector_on_a_server_dsn_writes_through_clickhouse_http(collector, make_collector, tmp_path):
    """A second collector whose store is a ClickHouse HTTP DSN (here: the first collector's
    endpoint) writes through clickhouse-connect like it would to a ClickHouse server."""
    from tests.otlp_send import exporter, recording_provider

    front = make_collector("--store", f"http://default:@127.0.0.1:{collector.query_port}/relay_db",
                           "--database", "relay_db", store_dir=tmp_path / "unused")
    service = f"relay-{secrets.token_hex(3)}"
    provider, memory = recording_provider(service)
    with provider.get_tracer("t").start_as_current_span("relayed"):
        pass
    exporter("http", front).export(memory.get_finished_spans())
    assert collector.rows("SELECT SpanName FROM relay_db.otel_traces WHERE ServiceName = {s:String}", s=service) == [
        {"SpanName": "relayed"}]
