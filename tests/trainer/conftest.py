import pytest


@pytest.fixture(scope="session")
def toy_model_dir(tmp_path_factory):
    """A tiny randomly initialized Llama with a word-level tokenizer (trainer/toy.py)."""
    from tracerl.trainer.toy import make_toy_model

    return str(make_toy_model(tmp_path_factory.mktemp("toy-model")))
