"""pytest fixtures for testing clients against mockllama; active once mockllama is installed.

    def test_my_client_notices_truncation(mockllama_base_url):
        client = openai.OpenAI(base_url=mockllama_base_url, api_key="unused")
        ...

- ``mockllama``: one server per session on a free loopback port, started while pytest collects,
  as soon as it sees a test that asks for it (``starting``).
  ``.url``, ``.base_url("fixed")`` (``http://127.0.0.1:PORT/fixed/v1``), ``.scenarios``.
- ``mockllama_base_url``: the base URL, once per behaviour: buggy, fixed, spec and any other
  that is no server's variant (``session.base_url_behaviours``).
- ``mockllama_variant_url``: the base URL, once per way a server reports a cut reply: stock
  llama-server's (buggy), the honest fixed and spec, and each other server's variant (ollama,
  vllm, ...: ``session.variant_url_behaviours``), so one test shows which servers fool a client.
- ``mockllama_cut``: one position of a sweep (a reply recorded cut at every limit up to where it
  finishes), once per position and behaviour: mark the test
  ``@pytest.mark.mockllama_sweep("tool-call")`` (``behaviours="variants"``, ``"all"`` or a list for
  more than buggy, fixed and spec). It is a ``Cut``: ``.scenario`` (``tool-call@17``),
  ``.position``, ``.behaviour``, ``.base_url``, ``.cut`` (the server itself said the reply was cut).
  Test ids read ``tool-call@17-fixed``.
- ``mockllama.journal``: every request the server answered this session, as ``Entry`` objects
  in order (``mockllama.requests`` is the same list); ``mockllama_journal``: only the current
  test's requests, with ``.last`` and ``.where(scenario=..., status=...)``.

The server takes `mockllama serve`'s options, each as ``--mockllama-<serve's flag>`` and as the ini
key ``mockllama_<name>`` (the command line wins; a repeatable option takes both), checked as
`serve` checks them: ``plugin_options`` lists them, docs/pytest.md says which are left out and
why. Two differ in a test session: ``--mockllama-cassettes`` directories are served beside the
bundled recordings, and the record directory (``--mockllama-record-to``, default
``mockllama-cassettes`` beside the ini file) is always served once it holds a cassette, so a
suite that recorded with ``--mockllama-upstream URL`` then runs offline with no option at all.

pytest loads this module in every session of every project where mockllama is installed, most of
which never ask for a server, so it imports nothing else of mockllama's: what pytest needs when it
starts (each option's flag and ini key, the behaviours) is read from ``offered.json``, made from
the declarations (``session.offered``), and the server, the options' parsing and the journal
(``session``) are imported once pytest collects a test that asks for the server (``starting``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mockllama.pytest_plugin import starting

if TYPE_CHECKING:
    from mockllama.pytest_plugin.session import Cut, Entry, JournalView, MockllamaServer

# The objects the fixtures hand tests are ``session``'s; Entry is the journal's. They are offered
# here, the module tests import, but loaded only when a test names one (``__getattr__``).
__all__ = [
    "mockllama",
    "mockllama_base_url",
    "mockllama_variant_url",
    "mockllama_journal",
    "mockllama_cut",
    "MockllamaServer",
    "JournalView",
    "Entry",
    "Cut",
]
_FROM_SESSION = ("MockllamaServer", "JournalView", "Entry", "Cut")
SWEEP_MARK = "mockllama_sweep"

OFFERED = json.loads(Path(__file__).with_name("offered.json").read_text(encoding="utf-8"))


def __getattr__(name: str):
    if name in _FROM_SESSION:
        from mockllama.pytest_plugin import session  # when a test names it: see the module's docstring

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pytest_addoption(parser: pytest.Parser) -> None:
    """One command-line option and one ini key for each option of `serve` a test session takes."""
    group = parser.getgroup("mockllama")
    for flag, offered, ini in OFFERED["options"]:
        if isinstance(offered.get("metavar"), list):  # one word each: argparse wants a tuple
            offered = {**offered, "metavar": tuple(offered["metavar"])}
        group.addoption(flag, **offered)
        parser.addini(**ini)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{SWEEP_MARK}(name, behaviours=None): run the test once per position of the sweep NAME (and per "
        "behaviour: buggy, fixed and spec by default; 'variants', 'all' or a list), each given as the "
        "mockllama_cut fixture",
    )


def pytest_itemcollected(item: pytest.Item) -> None:
    starting.collected(item)


def pytest_collection_finish(session: pytest.Session) -> None:
    starting.selected(session)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that asks for ``mockllama_cut`` runs once per position of its marked sweep and behaviour.
    Only such a test loads the recordings here (to know the positions): see the module's docstring."""
    if "mockllama_cut" not in metafunc.fixturenames:
        return
    from mockllama.pytest_plugin.session import sweep_cuts  # only for a sweep's test: see the module's docstring

    marks = list(metafunc.definition.iter_markers(SWEEP_MARK))
    cuts = sweep_cuts(metafunc.config, marks, metafunc.definition.nodeid)
    metafunc.parametrize("mockllama_cut", cuts, ids=[cut.id for cut in cuts], indirect=True)


@pytest.fixture(scope="session")
def mockllama(pytestconfig: pytest.Config) -> Iterator[MockllamaServer]:
    """One mockllama server for the whole session, on a free loopback port, started while pytest
    collects, as soon as it sees a test that asks for it, and stopped at the end.

    It serves the bundled recordings, with your own beside them (`--mockllama-cassettes`), and
    takes `serve`'s options as `--mockllama-<flag>` or the ini key `mockllama_<name>` (the pytest
    page lists them). It runs on a thread of its own, so synchronous and asynchronous clients
    both reach it.

    Yields:
        The running server, with its `url`, `base_url(behaviour)`, `scenarios` and the session's
            `journal`.
    """
    # Begun while pytest collected, as a rule: now, for a test that asks only as it runs (getfixturevalue).
    start = starting.begin(pytestconfig, collecting=False)
    try:
        yield start.server()
    finally:
        starting.end(pytestconfig)


@pytest.fixture(params=OFFERED["behaviours"])
def mockllama_base_url(request: pytest.FixtureRequest, mockllama: MockllamaServer) -> str:
    """The base URL of the session's server, `http://127.0.0.1:PORT/<behaviour>/v1`, for each
    behaviour in turn: a test that asks for it runs once with each (`buggy`, `fixed`, `spec`).
    The other servers' variants are `mockllama_variant_url`'s."""
    return mockllama.base_url(request.param)


@pytest.fixture(params=OFFERED["variants"])
def mockllama_variant_url(request: pytest.FixtureRequest, mockllama: MockllamaServer) -> str:
    """The base URL of the session's server, `http://127.0.0.1:PORT/<behaviour>/v1`, once for each
    way a server reports a cut reply: stock llama-server's (`buggy`), the honest `fixed` and
    `spec`, and each other server's variant (`ollama`, `vllm`, `localai`, `sglang`, `inspect-ai`,
    `aimock`, `lmstudio`). One test shows which servers fool a client."""
    return mockllama.base_url(request.param)


@pytest.fixture
def mockllama_cut(request: pytest.FixtureRequest, mockllama: MockllamaServer) -> Cut:
    """One position of a sweep in one behaviour, for a test marked
    `@pytest.mark.mockllama_sweep("tool-call")`: the test runs once per position and behaviour, with
    ids such as `tool-call@17-fixed`.

    Returns:
        A `Cut`: its `scenario` (`tool-call@17`, to send as the model or the `X-Mockllama-Scenario`
            header), `position` (the limit), `last` (where the sweep's reply finishes),
            `behaviour`, `base_url` and `cut` (whether the server itself said the reply was cut).
    """
    return request.param.served_by(mockllama)


@pytest.fixture
def mockllama_journal(mockllama: MockllamaServer) -> JournalView:
    """The requests this test's clients made, oldest first, although the session's server is
    shared: a `JournalView` marked when the test starts."""
    return mockllama.journal_from_now()
