import pytest

from tests.collector_proc import CollectorProcess


@pytest.fixture(scope="session")
def collector(tmp_path_factory):
    """One collector subprocess (embedded chdb store) shared by the session's tests; tests keep
    their data apart by their own trace ids or service names."""
    proc = CollectorProcess(tmp_path_factory.mktemp("shared-collector") / "store").start()
    yield proc
    proc.stop()


@pytest.fixture
def make_collector(tmp_path):
    """Start a dedicated collector with extra command-line arguments: make_collector("--token", "x")."""
    started = []

    def make(*args, env=None, store_dir=None):
        proc = CollectorProcess(store_dir or tmp_path / f"store{len(started)}", *args, env=env).start()
        started.append(proc)
        return proc

    yield make
    for proc in started:
        proc.stop()
