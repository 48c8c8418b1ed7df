import pytest
from opentelemetry import context as otel_context
from opentelemetry.instrumentation.utils import _SUPPRESS_INSTRUMENTATION_KEY

from tests.fake_openai_server import FakeOpenAIServer
from tests.gateway.gateway_proc import GatewayProcess
from tests.transition_builder.conftest import build, store  # noqa: F401  (the builder tests' own fixtures)

TOKEN = "gw-s3cret"


@pytest.fixture(autouse=True)
def plain_clients():
    """Calls from this process to the gateway stand for an agent that knows nothing of tracerl:
    if another test module activated tracerl's OpenAI instrumentor in this process, it stays out
    of these calls (a test that wants it re-enables it for its own calls)."""
    token = otel_context.attach(otel_context.set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
    yield
    otel_context.detach(token)


@pytest.fixture(scope="module")
def upstream():
    """A scripted vLLM-style server behind the module's gateway."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_upstream(request):
    if "upstream" in request.fixturenames:
        request.getfixturevalue("upstream").reset()


@pytest.fixture(scope="module")
def gateway(upstream, collector, tmp_path_factory):
    """`tracerl gateway --capture-tokens` in front of `upstream`, exporting to the shared collector,
    admin protected by a token."""
    gw = GatewayProcess([upstream.base_url], "--capture-tokens", collector=collector, token=TOKEN,
                        log_dir=tmp_path_factory.mktemp("gateway")).start()
    yield gw
    gw.stop()


@pytest.fixture
def make_gateway(collector, tmp_path):
    started = []

    def make(upstreams, *args, **kwargs):
        gw = GatewayProcess(upstreams, *args, collector=collector, log_dir=tmp_path, **kwargs).start()
        started.append(gw)
        return gw

    yield make
    for gw in started:
        gw.stop()
