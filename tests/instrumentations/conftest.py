import pytest

from tests.fake_openai_server import FakeOpenAIServer
from tests.otel_session import traced  # noqa: F401  (fixture)


@pytest.fixture
def llm():
    """A scripted OpenAI-compatible server that returns token ids and logprobs when asked."""
    with FakeOpenAIServer() as server:
        yield server
