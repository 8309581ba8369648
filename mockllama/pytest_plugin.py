"""pytest fixtures for testing clients against mockllama; active once mockllama is installed.

    def test_my_client_notices_truncation(mockllama_base_url):
        client = openai.OpenAI(base_url=mockllama_base_url, api_key="unused")
        ...

- ``mockllama``: one server per session on a free loopback port, started on first use.
  ``.url``, ``.base_url("fixed")`` (``http://127.0.0.1:PORT/fixed/v1``), ``.scenarios``.
- ``mockllama_base_url``: the base URL, once per behaviour (buggy, fixed, spec).

Extra cassette directories: ``--mockllama-cassettes DIR`` (repeatable) or the ini option
``mockllama_cassettes`` (one directory per line), served beside the bundled recordings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .replay import BEHAVIOURS


class MockllamaServer:
    """The running server, as tests see it."""

    def __init__(self, background, scenarios: dict):
        self._background = background
        self.scenarios: tuple[str, ...] = tuple(sorted(scenarios))

    @property
    def url(self) -> str:
        return self._background.url

    def base_url(self, behaviour: str = "buggy") -> str:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}; use one of: {', '.join(BEHAVIOURS)}")
        return self._background.base_url(behaviour)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockllama")
    group.addoption("--mockllama-cassettes", action="append", default=[], metavar="DIR",
                    help="extra cassette directory for the mockllama fixtures (repeatable)")
    parser.addini("mockllama_cassettes", type="paths", default=[],
                  help="extra cassette directories for the mockllama fixtures, one per line")


def _cassette_dirs(config: pytest.Config) -> list[Path]:
    from .cassettes import bundled_cassette_dir

    extra = [Path(p) for p in config.getini("mockllama_cassettes")]
    extra += [Path(p).resolve() for p in config.getoption("mockllama_cassettes")]
    return [bundled_cassette_dir(), *extra]


@pytest.fixture(scope="session")
def mockllama(pytestconfig: pytest.Config):
    """A mockllama server on a free loopback port for the whole session."""
    from .background import BackgroundServer
    from .cassettes import CassetteError, load_scenarios
    from .server import create_app

    try:
        scenarios = load_scenarios(_cassette_dirs(pytestconfig))
    except CassetteError as err:
        pytest.fail(f"mockllama: {err}", pytrace=False)
    with BackgroundServer(create_app(scenarios)) as background:
        yield MockllamaServer(background, scenarios)


@pytest.fixture(params=list(BEHAVIOURS))
def mockllama_base_url(request: pytest.FixtureRequest, mockllama: MockllamaServer) -> str:
    """``http://127.0.0.1:PORT/<behaviour>/v1``, once for each behaviour."""
    return mockllama.base_url(request.param)
