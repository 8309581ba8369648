"""The plugin's server for a test session, and how tests see it: imported once a collected test
asks for the server (``pytest_plugin.starting``), never when pytest loads the plugin (``pytest_plugin``).

The session's options are `mockllama serve`'s, each as ``--mockllama-<serve's flag>`` and as the
ini key ``mockllama_<name>`` (the command line wins; a repeatable option takes both), checked as
`serve` checks them: ``plugin_options`` lists them, docs/pytest.md says which are left out and
why. ``offered`` is what pytest needs of them when it starts, which the plugin reads from
``offered.json``.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any, NoReturn

import pytest

from mockllama.app import create_app, recording_of
from mockllama.behaviours.registry import BEHAVIOURS, DEFAULT_BEHAVIOUR, FIRST, unknown_behaviour
from mockllama.behaviours.variants import REPLIES as VARIANT_REPLIES
from mockllama.behaviours.variants import own_behaviours
from mockllama.matching.pipeline import match_keys
from mockllama.options import ServeOptions
from mockllama.pytest_plugin import SWEEP_MARK
from mockllama.recordings.cassettes import RECORDING_SETS, CassetteError, load_scenarios
from mockllama.recordings.sweeps import position_name
from mockllama.server.background import BackgroundServer
from mockllama.server.journal import JOURNAL, Entry, Journal
from mockllama.server.option_fields import Option, OptionError, options_of
from mockllama.upstream.options import DEFAULT_RECORD_DIR, with_record_dir

OFFERED_FILE = Path(__file__).with_name("offered.json")


class JournalView:
    """The journal's entries after a mark: what one test's clients sent, although the server is
    shared. The `mockllama_journal` fixture gives one, and `MockllamaServer.journal_from_now`.

    It reads as a list of `Entry`, oldest first: `len(view)`, `view[0]`, `for entry in view`.
    """

    def __init__(self, journal: Journal, since: int):
        self._journal = journal
        self._since = since

    @property
    def entries(self) -> list[Entry]:
        """The entries after the mark, oldest first."""
        return self._journal.entries(since=self._since)

    @property
    def last(self) -> Entry | None:
        """The latest entry, or None when nothing was answered since the mark."""
        entries = self.entries
        return entries[-1] if entries else None

    def where(self, **fields) -> list[Entry]:
        """The entries whose fields equal all of `fields`, e.g. `where(scenario="text-cut-8", status=200)`.

        Raises:
            TypeError: A field that entries do not have.
        """
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
    """The session's running server, as the `mockllama` fixture gives it to tests.

    Attributes:
        scenarios: The names of the scenarios it serves, sorted.
    """

    def __init__(self, background: BackgroundServer, scenarios: dict):
        self._background = background
        self.scenarios: tuple[str, ...] = tuple(sorted(scenarios))

    def stop(self) -> None:
        """Stop the server (the plugin does, at the end of the session)."""
        self._background.stop()

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
        """Empty the journal; entry ids go on from where they were."""
        self._background.app[JOURNAL].clear()

    @property
    def url(self) -> str:
        """The server's root URL, `http://127.0.0.1:PORT`."""
        return self._background.url

    def base_url(self, behaviour: str = DEFAULT_BEHAVIOUR) -> str:
        """The base URL to give a client for one behaviour, `http://127.0.0.1:PORT/fixed/v1`.

        Raises:
            ValueError: A behaviour that does not exist.
        """
        if behaviour not in BEHAVIOURS:
            raise ValueError(unknown_behaviour(behaviour))
        return self._background.base_url(behaviour)


@dataclasses.dataclass(frozen=True)
class Cut:
    """One position of a sweep in one behaviour: what the `mockllama_cut` fixture gives a test.

    Attributes:
        sweep: The sweep's name, `tool-call`.
        position: The limit the reply was recorded at, 1 to `last`.
        last: The sweep's last position, where its reply finishes by itself.
        behaviour: The behaviour the test runs against, `fixed`.
        cut: Whether the server itself said this reply was cut (the chat twin's `finish_reason:
            "length"`, or `/v1/messages`' `stop_reason: "max_tokens"`): what a client should notice.
        base_url: `http://127.0.0.1:PORT/fixed/v1`, once the session's server runs.
    """

    sweep: str
    position: int
    last: int
    behaviour: str
    cut: bool
    base_url: str = ""

    @property
    def scenario(self) -> str:
        """The position's scenario name, `tool-call@17`: send it as the model or in `X-Mockllama-Scenario`."""
        return position_name(self.sweep, self.position)

    @property
    def id(self) -> str:
        """The test id, `tool-call@17-fixed`."""
        return f"{self.scenario}-{self.behaviour}"

    def served_by(self, server: MockllamaServer) -> Cut:
        return dataclasses.replace(self, base_url=server.base_url(self.behaviour))


def _marked_behaviours(asked, nodeid: str) -> list[str]:
    if asked is None:
        return base_url_behaviours()
    named = {"variants": variant_url_behaviours(), "all": list(BEHAVIOURS)}
    if isinstance(asked, str) and asked in named:
        return named[asked]
    listed = [asked] if isinstance(asked, str) else list(asked)
    for name in listed:
        if name not in BEHAVIOURS:
            _fail(f"{unknown_behaviour(name)}; or 'variants', or 'all'", nodeid)
    return listed


def sweep_cuts(config: pytest.Config, marks: list, nodeid: str) -> list[Cut]:
    """Every position of each marked sweep, in each marked behaviour: ``mockllama_cut``'s params."""
    if not marks:
        _fail(f'a test that asks for mockllama_cut is marked @pytest.mark.{SWEEP_MARK}("tool-call")', nodeid)
    scenarios = loaded(config)
    cuts = []
    for mark in marks:
        if len(mark.args) != 1 or not isinstance(mark.args[0], str) or set(mark.kwargs) - {"behaviours"}:
            _fail(f'mark the test @pytest.mark.{SWEEP_MARK}("NAME") or ("NAME", behaviours=[...])', nodeid)
        name = mark.args[0]
        positions = sorted(
            (scenario for scenario in scenarios.values() if scenario.sweep == name), key=lambda s: s.limit or 0
        )
        if not positions:
            sweeps = sorted({scenario.sweep for scenario in scenarios.values() if scenario.sweep is not None})
            _fail(f"no sweep named {name!r} is served; the sweeps: {', '.join(sweeps) or 'none'}", nodeid)
        last = positions[-1].limit or 0
        for behaviour in _marked_behaviours(mark.kwargs.get("behaviours"), nodeid):
            cuts += [
                Cut(name, scenario.limit or 0, last, behaviour, bool(scenario.stopped_by_limit()))
                for scenario in positions
            ]
    return cuts


def base_url_behaviours() -> list[str]:
    """``mockllama_base_url``'s behaviours: every one but the other servers' variants, which would
    multiply a suite's tests and fail those written for llama-server's own replies."""
    return own_behaviours()


def variant_url_behaviours() -> list[str]:
    """``mockllama_variant_url``'s behaviours: stock llama-server's (buggy), the honest fixed and spec,
    and each other server's variant, in the registry's order."""
    return [name for name in BEHAVIOURS if name in FIRST or name in VARIANT_REPLIES]


def plugin_options() -> tuple[Option, ...]:
    """The options of `serve` that make sense in a test session (docs/pytest.md lists the others, and why)."""
    return tuple(declared for declared in options_of(ServeOptions) if not declared.not_in_plugin)


def offered() -> dict:
    """What pytest needs of the plugin when it starts: for each of ``plugin_options``, the arguments
    of its ``addoption`` and its ``addini``; and the behaviours ``mockllama_base_url`` and
    ``mockllama_variant_url`` run once for. The plugin reads it from ``offered.json``
    (``offered_json``), so that loading it imports none of this; tests/plugin/test_plugin_options.py
    holds the file to what this makes now."""
    options = []
    for declared in plugin_options():
        helped = declared.plugin_help or declared.help
        if declared.default_text is not None:
            helped += f" (default: {declared.default_text})"
        flag: dict[str, Any]
        ini: dict[str, Any]
        if declared.switch:
            flag = {"dest": declared.ini, "action": "store_true", "default": None, "help": helped}
            ini = {"name": declared.ini, "type": "bool", "default": False, "help": helped}
        else:
            flag = {
                "dest": declared.ini,
                "action": "append" if declared.repeatable else "store",
                "nargs": declared.nargs if declared.nargs > 1 else None,
                "default": [] if declared.repeatable else None,
                "metavar": (declared.metavar or "").split() if declared.nargs > 1 else declared.shown_metavar,
                "help": helped + (" (repeatable)" if declared.repeatable else ""),
            }
            if declared.repeatable:
                kind = "paths" if declared.directory else "linelist"
                ini = {"name": declared.ini, "type": kind, "default": [], "help": helped + " (one a line)"}
            else:
                ini = {"name": declared.ini, "default": "", "help": helped}
        options.append([declared.plugin_flag, flag, ini])
    return {"behaviours": base_url_behaviours(), "variants": variant_url_behaviours(), "options": options}


def offered_json() -> str:
    """``offered()`` as offered.json holds it (tests/support/generated_docs.py writes it)."""
    return json.dumps(offered(), indent=1, ensure_ascii=False) + "\n"


def _where_ini(config: pytest.Config) -> Path:
    """What an ini file's relative paths are relative to: its directory, else the rootdir."""
    return Path(config.inipath).parent if config.inipath else Path(config.rootpath)


def _parsed(declared: Option, text: str, where: str):
    try:
        return declared.parse(text)
    except ValueError as err:
        _fail(str(err), where)


def _given(config: pytest.Config, declared: Option) -> tuple[object, str] | None:
    """The value given for ``declared``, parsed, and where it was given: the command line beats the
    ini file, and a repeatable option takes both. None when it is given in neither."""
    flag, ini = declared.plugin_flag, f"the ini key {declared.ini}"
    on_command_line, in_ini = config.getoption(declared.ini), config.getini(declared.ini)
    if declared.switch:
        return (True, flag) if on_command_line else ((True, ini) if in_ini else None)
    if not declared.repeatable:
        if on_command_line is not None:
            value, where = _parsed(declared, on_command_line, flag), flag
        elif in_ini:
            value, where = _parsed(declared, in_ini, ini), ini
        else:
            return None
        if declared.directory:  # relative to where it was written: the ini file's directory, or here
            value = _where_ini(config) / value if where == ini else Path(value).resolve()
        return value, where
    values: list = []
    for line in in_ini:  # pytest has made "paths" absolute, relative to the ini file
        words = str(line).split(None, declared.nargs - 1)
        if len(words) != declared.nargs:
            _fail(f"each line is {declared.metavar}, not {str(line)!r}", ini)
        values.append(tuple(words) if declared.nargs > 1 else _parsed(declared, str(line), ini))
    for each in on_command_line:
        if declared.nargs > 1:
            values.append(tuple(each))
        else:
            value = _parsed(declared, each, flag)
            values.append(Path(value).resolve() if declared.directory else value)
    return (tuple(values), flag if on_command_line else ini) if values else None


def serve_options(config: pytest.Config) -> tuple[ServeOptions, dict[str, str]]:
    """The session's options, checked as `serve` checks them, and where each was given; a bad one
    stops the session with its reason."""
    values: dict[str, Any] = {}
    where: dict[str, str] = {}
    for declared in plugin_options():
        given = _given(config, declared)
        if given is not None:
            values[declared.name], where[declared.name] = given
    try:
        options = ServeOptions(**values)
    except OptionError as err:
        _fail_option(err, where)
    if options.record_to is None:  # the record directory is beside the ini file, not wherever pytest runs
        options = dataclasses.replace(options, record_to=_where_ini(config) / DEFAULT_RECORD_DIR)
    return options, where


def _fail(message: str, where: str) -> NoReturn:
    """Stop the session with the reason alone: ``pytest.fail``, with no exception chained to it."""
    raise pytest.fail.Exception(f"mockllama: {message} ({where})", pytrace=False) from None


def _fail_option(err: OptionError, where: dict[str, str]) -> NoReturn:
    offered = {declared.name: declared for declared in options_of(ServeOptions)}

    def spell(name: str) -> str:
        declared = offered[name]
        return f"{declared.plugin_flag} {declared.metavar or ''}".rstrip() + f" or the ini key {declared.ini}"

    declared = offered[err.field]
    _fail(err.told(spell), where.get(err.field, f"{declared.plugin_flag} or the ini key {declared.ini}"))


LOADED = pytest.StashKey[dict]()
# A sweep's test loads the recordings on pytest's thread as it is collected, and the server's start
# on its own thread (``starting``) may be loading them at the same time: one of them loads.
_LOADING = threading.Lock()


def loaded(config: pytest.Config) -> dict:
    """The session's recordings, loaded once: for the server, and before it for a sweep's positions."""
    with _LOADING:
        if LOADED not in config.stash:
            options, _ = serve_options(config)
            directories = [RECORDING_SETS[options.recordings](), *options.cassettes]
            assert options.record_to is not None  # serve_options sets it
            try:
                scenarios = load_scenarios(with_record_dir(directories, options.record_to), keys_of=match_keys)
            except CassetteError as err:
                pytest.fail(f"mockllama: {err}", pytrace=False)
            config.stash[LOADED] = scenarios
        return config.stash[LOADED]


def started(config: pytest.Config) -> MockllamaServer:
    """The session's server, running on a free loopback port until its ``stop()``; a bad option or
    cassette stops the session with its reason, as ``serve`` would."""
    options, where = serve_options(config)
    recording = recording_of(options)
    scenarios = loaded(config)
    try:
        app = create_app(scenarios, options, record_on_miss=recording)
    except OptionError as err:
        _fail_option(err, where)
    return MockllamaServer(BackgroundServer(app).start(), scenarios)
