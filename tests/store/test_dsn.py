import os

import pytest

from tracerl.store import StoreError, resolve_dsn
from tracerl.store.owner import OwnerInfo, read_owner, write_owner


def test_default_is_dot_tracerl_store_under_cwd(monkeypatch, tmp_path):
    monkeypatch.delenv("TRACERL_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    dsn = resolve_dsn()
    assert dsn.embedded and dsn.path == str(tmp_path / ".tracerl" / "store") and dsn.database == "default"


def test_env_overrides_default(monkeypatch, tmp_path):
    monkeypatch.setenv("TRACERL_STORE", f"chdb://{tmp_path}/elsewhere")
    assert resolve_dsn().path == f"{tmp_path}/elsewhere"
    assert resolve_dsn("chdb:///explicit").path == "/explicit"  # an explicit DSN wins


def test_embedded_forms():
    assert resolve_dsn("chdb:///abs/path?database=obs").database == "obs"
    assert resolve_dsn("/plain/folder").path == "/plain/folder"
    assert resolve_dsn("chdb:relative").path == os.path.abspath("relative")


def test_server_forms():
    dsn = resolve_dsn("https://user:p%40ss@ch.example:9443/otel")
    assert (dsn.kind, dsn.host, dsn.port, dsn.secure, dsn.username, dsn.password, dsn.database) == (
        "http", "ch.example", 9443, True, "user", "p@ss", "otel")
    dsn = resolve_dsn("http://localhost")
    assert (dsn.port, dsn.database, dsn.username) == (8123, "default", "default")


@pytest.mark.parametrize("raw,message", [
    ("postgres://x/y", "unknown scheme"),
    ("chdb://", "no path"),
    ("http://:8123/db", "no host"),
    ("http://host:notaport/db", "bad port"),
])
def test_bad_dsns_name_the_dsn(raw, message):
    with pytest.raises(StoreError) as err:
        resolve_dsn(raw)
    assert raw in str(err.value) and message in str(err.value)


def test_stale_owner_file_is_ignored(tmp_path):
    store = str(tmp_path / "store")
    write_owner(store, OwnerInfo(pid=os.getpid(), query_url="http://127.0.0.1:1"))
    assert read_owner(store).query_url == "http://127.0.0.1:1"
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    write_owner(store, OwnerInfo(pid=dead, query_url="http://127.0.0.1:2"))
    assert read_owner(store) is None
    (tmp_path / "store.owner.json").write_text("{not json")
    assert read_owner(store) is None
