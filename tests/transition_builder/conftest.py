import pytest


@pytest.fixture
def store(collector):
    """A clickhouse-connect client for the shared collector's store (through its query endpoint)."""
    return collector.client()


@pytest.fixture
def build(store):
    """Build the given traces through the real store: (transitions, report)."""
    from tracerl.transition_builder import build as run_build

    def run(*traces, **options):
        result = run_build(store, traces=list(traces), **options)
        return result.transitions, result.report

    return run


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory):
    from tests.transition_builder.tiny_tokenizer import make_tokenizer

    return str(make_tokenizer(tmp_path_factory.mktemp("tiny-tokenizer")))


@pytest.fixture(scope="session")
def hf_tokenizer(tokenizer_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer_dir, local_files_only=True)
