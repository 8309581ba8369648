"""pytest fixtures for testing clients against mockllama; active once mockllama is installed.

    def test_my_client_notices_truncation(mockllama_base_url):
        client = openai.OpenAI(base_url=mockllama_base_url, api_key="unused")
        ...

- ``mockllama``: one server per session on a free loopback port, started on first use.
  ``.url``, ``.base_url("fixed")`` (``http://127.0.0.1:PORT/fixed/v1``), ``.scenarios``.
- ``mockllama_base_url``: the base URL, once per behaviour (buggy, fixed, spec).
- ``mockllama.journal``: every request the server answered this session, as ``Entry`` objects
  in order (``mockllama.requests`` is the same list); ``mockllama_journal``: only the current
  test's requests, with ``.last`` and ``.where(scenario=..., status=...)``.

Extra cassette directories: ``--mockllama-cassettes DIR`` (repeatable) or the ini option
``mockllama_cassettes`` (one directory per line), served beside the bundled recordings.
``--mockllama-journal-size N`` (ini ``mockllama_journal_size``) bounds the journal (default 1000).
``--mockllama-fault SCENARIO FAULT`` (ini ``mockllama_faults``, one ``SCENARIO FAULT`` a line)
applies a fault to every reply of a scenario; the ``X-Mockllama-Fault`` header does it per request.

Record your own client's traffic: ``--mockllama-upstream URL`` (ini ``mockllama_upstream``) sends
what no recording answers to a live llama-server and records it into ``--mockllama-record-to DIR``
(ini ``mockllama_record_to``; default ``mockllama-cassettes`` beside the ini file or rootdir).
``--mockllama-record-mode none|new|all`` (ini ``mockllama_record_mode``) as in ``mockllama serve``;
with an upstream the default is ``new``. The record directory is always served once it holds a
cassette, so the same suite then runs offline with no option at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mockllama.behaviours.replay import BEHAVIOURS
from mockllama.server.journal import DEFAULT_JOURNAL_SIZE, JOURNAL, Entry, Journal


class JournalView:
    """The journal entries after a mark: what one test's client sent, although the server is shared."""

    def __init__(self, journal: Journal, since: int):
        self._journal = journal
        self._since = since

    @property
    def entries(self) -> list[Entry]:
        return self._journal.entries(since=self._since)

    @property
    def last(self) -> Entry | None:
        entries = self.entries
        return entries[-1] if entries else None

    def where(self, **fields) -> list[Entry]:
        """The entries whose attributes equal all of ``fields``, e.g. ``where(scenario="text-cut-8")``."""
        unknown = set(fields) - set(Entry.__dataclass_fields__) - {"body"}
        if unknown:
            raise TypeError(f"journal entries have no field {', '.join(sorted(unknown))}")
        return [e for e in self.entries if all(getattr(e, name) == value for name, value in fields.items())]

    def __iter__(self):
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index):
        return self.entries[index]

    def __repr__(self) -> str:
        return f"<mockllama journal: {len(self)} entries after #{self._since}>"


class MockllamaServer:
    """The running server, as tests see it."""

    def __init__(self, background, scenarios: dict):
        self._background = background
        self.scenarios: tuple[str, ...] = tuple(sorted(scenarios))

    @property
    def journal(self) -> list[Entry]:
        """Every journalled request of the session (the last --mockllama-journal-size), in order."""
        return self._background.app[JOURNAL].entries()

    requests = journal

    def journal_from_now(self) -> JournalView:
        """A view that will show only the requests answered from now on."""
        journal = self._background.app[JOURNAL]
        return JournalView(journal, journal.last_id)

    def clear_journal(self) -> None:
        self._background.app[JOURNAL].clear()

    @property
    def url(self) -> str:
        return self._background.url

    def base_url(self, behaviour: str = "buggy") -> str:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}; use one of: {', '.join(BEHAVIOURS)}")
        return self._background.base_url(behaviour)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockllama")
    group.addoption(
        "--mockllama-cassettes",
        action="append",
        default=[],
        metavar="DIR",
        help="extra cassette directory for the mockllama fixtures (repeatable)",
    )
    parser.addini(
        "mockllama_cassettes",
        type="paths",
        default=[],
        help="extra cassette directories for the mockllama fixtures, one per line",
    )
    group.addoption(
        "--mockllama-journal-size",
        type=int,
        default=None,
        metavar="N",
        help=f"requests the mockllama journal keeps (default {DEFAULT_JOURNAL_SIZE}; 0: off)",
    )
    parser.addini(
        "mockllama_journal_size",
        default=str(DEFAULT_JOURNAL_SIZE),
        help="requests the mockllama journal keeps (0: off)",
    )
    group.addoption(
        "--mockllama-fault",
        action="append",
        nargs=2,
        default=[],
        metavar=("SCENARIO", "FAULT"),
        help="apply FAULT to every reply of SCENARIO ('*': all), e.g. tool-cut-20 disconnect=3",
    )
    parser.addini(
        "mockllama_faults",
        type="linelist",
        default=[],
        help="'SCENARIO FAULT' per line: faults the mockllama server applies per scenario",
    )
    group.addoption(
        "--mockllama-upstream",
        metavar="URL",
        help="a live llama-server to send what no recording answers to, and record it",
    )
    parser.addini("mockllama_upstream", default="", help="a live llama-server to record misses from")
    group.addoption(
        "--mockllama-record-mode",
        metavar="none|new|all",
        help="none: replay only; new: record what no recording matches; all: record everything "
        "again (default: new with an upstream)",
    )
    parser.addini("mockllama_record_mode", default="", help="none, new or all (default: new with an upstream)")
    group.addoption(
        "--mockllama-record-to",
        metavar="DIR",
        help="where recordings go, served too (default: mockllama-cassettes in the rootdir)",
    )
    parser.addini("mockllama_record_to", default="", help="where recordings go (default: mockllama-cassettes)")
    group.addoption(
        "--mockllama-setup",
        metavar="NAME",
        help="the server set-up whose recordings answer by prompt (serve --setup; default: the default one)",
    )
    parser.addini("mockllama_setup", default="", help="the server set-up whose recordings answer by prompt")


def _journal_size(config: pytest.Config) -> int:
    size = config.getoption("mockllama_journal_size")
    text = str(config.getini("mockllama_journal_size")) if size is None else str(size)
    if not text.strip().isdigit():
        pytest.fail(f"mockllama: the journal size must be a whole number >= 0, not {text!r}", pytrace=False)
    return int(text)


def _faults(config: pytest.Config) -> dict[str, str]:
    pairs = [line.split(None, 1) for line in config.getini("mockllama_faults")]
    if any(len(pair) != 2 for pair in pairs):
        pytest.fail(
            "mockllama: each mockllama_faults line is 'SCENARIO FAULT', e.g. 'tool-cut-20 disconnect=3'", pytrace=False
        )
    return dict(pairs + [tuple(pair) for pair in config.getoption("mockllama_fault")])


def _cassette_dirs(config: pytest.Config) -> list[Path]:
    from mockllama.recordings.cassettes import bundled_cassette_dir
    from mockllama.upstream.record_on_miss import with_record_dir

    extra = [Path(p) for p in config.getini("mockllama_cassettes")]
    extra += [Path(p).resolve() for p in config.getoption("mockllama_cassettes")]
    return with_record_dir([bundled_cassette_dir(), *extra], _record_to(config))


def _setting(config: pytest.Config, name: str) -> str | None:
    """The command line's value, else the ini file's."""
    return config.getoption(f"mockllama_{name}") or config.getini(f"mockllama_{name}") or None


def _record_to(config: pytest.Config) -> Path:
    from mockllama.upstream.record_on_miss import DEFAULT_RECORD_DIR

    given = config.getoption("mockllama_record_to")
    if given:
        return Path(given).resolve()
    base = Path(config.inipath).parent if config.inipath else Path(config.rootpath)
    return base / (config.getini("mockllama_record_to") or DEFAULT_RECORD_DIR)


def _record_on_miss(config: pytest.Config):
    """The recording options, or None to replay only; a bad value stops the session with its reason."""
    from mockllama.upstream.client import parse_upstream
    from mockllama.upstream.record_mode import RecordMode, parse_record_mode
    from mockllama.upstream.record_on_miss import RecordOnMiss

    upstream, mode = _setting(config, "upstream"), _setting(config, "record_mode")
    try:
        mode = parse_record_mode(mode or ("new" if upstream else "none"))
        if upstream is None:
            if mode is not RecordMode.NONE:
                raise ValueError(f"record mode {mode.value!r} needs --mockllama-upstream URL (or mockllama_upstream)")
            return None
        return RecordOnMiss(parse_upstream(upstream), _record_to(config), mode)
    except ValueError as err:
        pytest.fail(f"mockllama: {err}", pytrace=False)


@pytest.fixture(scope="session")
def mockllama(pytestconfig: pytest.Config):
    """A mockllama server on a free loopback port for the whole session."""
    from mockllama.app import create_app
    from mockllama.matching.keys import match_keys
    from mockllama.recordings.cassettes import CassetteError, load_scenarios
    from mockllama.server.background import BackgroundServer

    recording = _record_on_miss(pytestconfig)
    try:
        scenarios = load_scenarios(_cassette_dirs(pytestconfig), keys_of=match_keys)
    except CassetteError as err:
        pytest.fail(f"mockllama: {err}", pytrace=False)
    try:
        app = create_app(
            scenarios,
            journal_size=_journal_size(pytestconfig),
            faults=_faults(pytestconfig),
            setup=pytestconfig.getoption("mockllama_setup") or pytestconfig.getini("mockllama_setup") or None,
            record_on_miss=recording,
        )
    except ValueError as err:
        pytest.fail(f"mockllama: {err}", pytrace=False)
    with BackgroundServer(app) as background:
        yield MockllamaServer(background, scenarios)


@pytest.fixture(params=list(BEHAVIOURS))
def mockllama_base_url(request: pytest.FixtureRequest, mockllama: MockllamaServer) -> str:
    """``http://127.0.0.1:PORT/<behaviour>/v1``, once for each behaviour."""
    return mockllama.base_url(request.param)


@pytest.fixture
def mockllama_journal(mockllama: MockllamaServer) -> JournalView:
    """Only the requests this test's clients made, in order (the session's server is shared)."""
    return mockllama.journal_from_now()
