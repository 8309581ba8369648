"""The replay server's options, each declared once: a frozen dataclass field whose metadata says how
it is offered (``option``). ``serve``'s click options, the pytest plugin's options and ini keys,
the ``Settings`` the server runs with and the options tables in the docs are all made by loops
over ``options_of``; ``upstream.options`` declares the recording options the same way, and
``mockllama.app.ServeOptions`` is the two together.

One validation for every way in: each option's ``parse`` turns the text given (on the command line
or in an ini file) into its value, or raises ``ValueError`` with the reason; the checks that need
more than one option, or the loaded recordings, raise ``OptionError``, which names the option, so
the command line and the plugin each say it in their own spelling.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mockllama.behaviours.registry import BEHAVIOURS, DEFAULT_BEHAVIOUR, unknown_behaviour
from mockllama.recordings.cassettes import RECORDING_SETS
from mockllama.server.cors import check_origin
from mockllama.server.faults import MAX_VALUE
from mockllama.server.journal import DEFAULT_BODY_BUDGET, DEFAULT_BODY_CAP, DEFAULT_JOURNAL_SIZE
from mockllama.server.pacing import parse_pace

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 18090
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
# Seconds a request body may take to arrive in full once its head is in, as nginx's
# client_body_timeout (60 s).
DEFAULT_BODY_TIMEOUT = 60.0


class OptionError(ValueError):
    """A value the option ``field`` (a field name) cannot take. ``{needs}`` in the message stands for
    another option it needs, which each way in spells its own way (``told``)."""

    def __init__(self, field: str, message: str, needs: str | None = None):
        super().__init__(message)
        self.field, self.message, self.needs = field, message, needs

    def told(self, spell: Callable[[str], str]) -> str:
        """The message, with the option it needs spelled by ``spell`` (field name -> how to write it)."""
        return self.message if self.needs is None else self.message.replace("{needs}", spell(self.needs))


@contextlib.contextmanager
def blame(field: str) -> Iterator[None]:
    """A ValueError raised inside becomes an OptionError of ``field``."""
    try:
        yield
    except OptionError:
        raise
    except ValueError as err:
        raise OptionError(field, str(err)) from None


@dataclass(frozen=True)
class Option:
    """How one option is offered. ``name`` and ``default`` are its field's (``options_of`` fills them in)."""

    flag: str  # on serve's command line; the plugin's is --mockllama-<the same>
    help: str
    metavar: str | None = None
    parse: Callable[[str], Any] = str  # one text -> its value; a ValueError that says why otherwise
    choices: Callable[[], Iterable[str]] | None = None  # what to list in the help
    shown_default: str | None = None  # the default as the help shows it, where not its value's text
    repeatable: bool = False  # the field is a tuple of values, one per use
    nargs: int = 1  # words per use (--fault SCENARIO FAULT: 2; then its items are kept as text)
    switch: bool = False  # takes no value: given or not
    directory: bool = False  # a path; the plugin reads an ini file's relative to that file
    plugin_help: str | None = None  # where it means something else in a test session
    not_in_plugin: str | None = None  # why the pytest plugin does not offer it
    name: str = ""
    default: Any = None

    @property
    def plugin_flag(self) -> str:
        return "--mockllama-" + self.flag.removeprefix("--")

    @property
    def ini(self) -> str:
        return "mockllama_" + self.name

    @property
    def default_text(self) -> str | None:
        """The default as text that ``parse`` reads back, or None when there is none to show."""
        if self.shown_default is not None:
            return self.shown_default
        if self.default is None or self.switch or self.repeatable:
            return None
        return str(self.default)

    @property
    def shown_metavar(self) -> str | None:
        if self.choices is not None:
            return "[" + "|".join(self.choices()) + "]"
        return self.metavar


def option(flag: str, help: str, **how) -> dict[str, Option]:
    """A field's metadata: ``field(default=..., metadata=option("--pace", "...", parse=...))``."""
    return {"option": Option(flag, help, **how)}


def options_of(cls) -> tuple[Option, ...]:
    """The options ``cls`` (an options dataclass) declares, in order."""
    return tuple(
        dataclasses.replace(f.metadata["option"], name=f.name, default=f.default)
        for f in dataclasses.fields(cls)
        if "option" in f.metadata
    )


# --- parsers: text -> value, or a ValueError that says what is wanted ---


def whole(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    wanted = f"a whole number from {minimum} to {maximum}" if maximum is not None else f"a whole number >= {minimum}"

    def parse(text: str) -> int:
        try:
            value = int(text.strip(), 10)
        except ValueError:
            raise ValueError(f"{text!r} is not {wanted}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise ValueError(f"{text!r} is not {wanted}")
        return value

    return parse


def seconds(minimum: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not value >= minimum or value == float("inf"):
            raise ValueError(f"{text!r} is not a number of seconds >= {minimum:g}")
        return value

    return parse


def one_of(choices: Callable[[], Iterable[str]], what: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        known = list(choices())
        if text not in known:
            raise ValueError(f"unknown {what} {text!r}; use one of: {', '.join(known)}")
        return text

    return parse


def directory(text: str) -> Path:
    path = Path(text)
    if path.is_file():
        raise ValueError(f"{text!r} is a file, not a directory")
    return path


def _behaviour(text: str) -> str:
    if text not in BEHAVIOURS:
        raise ValueError(unknown_behaviour(text))
    return text


def _behaviours() -> list[str]:
    return list(BEHAVIOURS)


CASSETTES_HELP = (
    "Directory of vcrpy cassettes, searched recursively; one scenario per file, named after it. "
    "Repeat to serve several. Default: the recordings bundled with mockllama (see --recordings)."
)
RECORDINGS_HELP = (
    "Which recordings bundled with mockllama to use when no --cassettes is given. stock: llama-server "
    "b11434 as released. patched: the same build with mockllama's fix "
    "(patches/llama-server-responses-incomplete.patch), what a corrected llama-server really sent, "
    "under the same scenario names; buggy replays them as recorded."
)


@dataclass(frozen=True)
class ReplayOptions:
    """The options of the replay server, as ``serve`` takes them; ``create_replay_app`` runs with them."""

    host: str = field(
        default=DEFAULT_HOST,
        metadata=option(
            "--host",
            "Address to bind. Loopback unless you say so.",
            metavar="ADDRESS",
            not_in_plugin="the plugin's server listens on 127.0.0.1 only",
        ),
    )
    port: int = field(
        default=DEFAULT_PORT,
        metadata=option(
            "--port",
            "Port to bind. 0: a free port, named in the URL on the first line printed.",
            metavar="PORT",
            parse=whole(0, 65535),
            not_in_plugin="the plugin picks a free port; `mockllama.url` names it",
        ),
    )
    behaviour: str = field(
        default=DEFAULT_BEHAVIOUR,
        metadata=option(
            "--behaviour",
            "Behaviour for requests that choose none, by a behaviour's path prefix (/NAME/v1/...) or the "
            "X-Mockllama-Behaviour header.",
            parse=_behaviour,
            choices=_behaviours,
        ),
    )
    cassettes: tuple[Path, ...] = field(
        default=(),
        metadata=option(
            "--cassettes",
            CASSETTES_HELP,
            metavar="DIR",
            parse=Path,
            repeatable=True,
            directory=True,
            plugin_help="Directory of vcrpy cassettes, searched recursively, served beside the bundled recordings.",
        ),
    )
    recordings: str = field(
        default="stock",
        metadata=option(
            "--recordings",
            RECORDINGS_HELP,
            parse=one_of(lambda: RECORDING_SETS, "recordings"),
            choices=lambda: RECORDING_SETS,
            plugin_help="Which recordings bundled with mockllama to serve: stock (llama-server b11434 as "
            "released) or patched (the same build with mockllama's fix).",
        ),
    )
    fallback: str | None = field(
        default=None,
        metadata=option(
            "--fallback",
            "Answer requests that match no recording with this scenario instead of a 404.",
            metavar="SCENARIO",
        ),
    )
    setup: str | None = field(
        default=None,
        metadata=option(
            "--setup",
            "The server set-up whose recordings answer requests by their prompt (`mockllama scenarios` shows each "
            "scenario's); the others answer only when chosen by name. Default: the default set-up, e.g. "
            "--setup smollm2-135m-forced-thinking serves the forced-thinking recordings.",
            metavar="NAME",
        ),
    )
    max_body_bytes: int = field(
        default=DEFAULT_MAX_BODY_BYTES,
        metadata=option("--max-body-bytes", "Larger request bodies get HTTP 413.", metavar="N", parse=whole(1)),
    )
    body_timeout: float = field(
        default=DEFAULT_BODY_TIMEOUT,
        metadata=option(
            "--body-timeout",
            "Seconds a request body may take to arrive in full once its head is in; past it, HTTP 408 "
            "(as nginx's client_body_timeout).",
            metavar="SECONDS",
            parse=seconds(0.1),
        ),
    )
    pace: float | None = field(  # None: instant; else divide the recorded timings by this
        default=None,
        metadata=option(
            "--pace",
            "instant: no waiting. recorded: streams keep the recording's own timing (prompt_ms, then "
            "predicted_per_token_ms per delta). A number (0.001 or more) scales that: 2 is twice as fast.",
            metavar="instant|recorded|FACTOR",
            parse=parse_pace,
            shown_default="instant",
        ),
    )
    delay: int = field(
        default=0,
        metadata=option(
            "--delay",
            "Wait MS milliseconds before every replayed reply, as a real server's latency would, on top of "
            "--pace and any fault. 0: no waiting.",
            metavar="MS",
            parse=whole(0, MAX_VALUE),
        ),
    )
    journal_size: int = field(
        default=DEFAULT_JOURNAL_SIZE,
        metadata=option(
            "--journal-size",
            "Keep the last N requests in the journal (GET /_mockllama/journal; DELETE clears it). 0: no journal.",
            metavar="N",
            parse=whole(0),
        ),
    )
    journal_body_bytes: int = field(
        default=DEFAULT_BODY_CAP,
        metadata=option(
            "--journal-body-bytes",
            "Keep up to N bytes of each request body in the journal; a longer one is cut there and flagged "
            "body_truncated. The default holds a coding agent's whole request.",
            metavar="N",
            parse=whole(0),
        ),
    )
    journal_bytes: int = field(
        default=DEFAULT_BODY_BUDGET,
        metadata=option(
            "--journal-bytes",
            "Keep up to N bytes of request bodies in the whole journal; past it the oldest entries lose "
            "their bodies first (flagged body_dropped) and keep the rest.",
            metavar="N",
            parse=whole(0),
        ),
    )
    faults: tuple[tuple[str, str], ...] = field(  # (scenario or "*", fault); a {scenario: fault} dict is taken too
        default=(),
        metadata=option(
            "--fault",
            "Apply FAULT to every reply of SCENARIO ('*': every scenario); repeatable. X-Mockllama-Fault "
            "overrides it per request. The faults: the list in `mockllama serve --help`, or docs/faults.md.",
            metavar="SCENARIO FAULT",
            repeatable=True,
            nargs=2,
        ),
    )
    cors_origins: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "--cors-origin",
            "Allow cross-origin browser requests only from this origin (repeatable), e.g. http://localhost:5173. "
            "Default: any origin, as llama-server.",
            metavar="ORIGIN",
            parse=check_origin,
            repeatable=True,
        ),
    )
    access_log: bool = field(
        default=False,
        metadata=option(
            "--access-log",
            "Print one line per request (off by default: it costs about a fifth of the throughput).",
            switch=True,
            not_in_plugin="the journal (`mockllama_journal`) shows a test what its client sent",
        ),
    )
    allowed_hosts: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "--allowed-host",
            "Answer only requests whose Host header names NAME (port ignored; repeatable), e.g. "
            "--allowed-host localhost --allowed-host 127.0.0.1; others get HTTP 403. Default: any "
            "host, as llama-server. Guards against DNS rebinding by web pages.",
            metavar="NAME",
            repeatable=True,
        ),
    )

    def __post_init__(self) -> None:
        """Repeated options as tuples, whatever sequence (or, for faults, mapping) was given."""
        faults = self.faults.items() if isinstance(self.faults, Mapping) else self.faults
        object.__setattr__(self, "faults", tuple((str(scenario), str(fault)) for scenario, fault in faults))
        object.__setattr__(self, "cassettes", tuple(Path(path) for path in self.cassettes))
        object.__setattr__(self, "cors_origins", tuple(self.cors_origins))
        object.__setattr__(self, "allowed_hosts", tuple(self.allowed_hosts))
        if self.behaviour not in BEHAVIOURS:
            raise OptionError("behaviour", unknown_behaviour(self.behaviour))
        if self.journal_body_bytes > self.journal_bytes:
            raise OptionError(
                "journal_body_bytes",
                f"{self.journal_body_bytes} bytes of one body do not fit within the {self.journal_bytes} kept for "
                "all the bodies: raise {needs}, or lower this",
                needs="journal_bytes",
            )


# --- the docs: the options tables, made from the declarations ---


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _written(flag: str, declared: Option) -> str:
    if declared.switch:
        return f"`{flag}`"
    return f"`{flag} {declared.shown_metavar or 'VALUE'}`"


def options_table(cls) -> str:
    """Every option of ``cls``: on serve's command line, in the pytest plugin (or why not), its
    default, and what it does."""
    lines = [
        "| `serve` option | pytest option, ini key | default | what it does |",
        "| --- | --- | --- | --- |",
    ]
    for declared in options_of(cls):
        plugin = (
            f"not offered: {declared.not_in_plugin}"
            if declared.not_in_plugin
            else f"`{declared.plugin_flag}`, `{declared.ini}`"
        )
        default = f"`{declared.default_text}`" if declared.default_text is not None else ""
        cells = [_written(declared.flag, declared), plugin, default, declared.help]
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines)


def plugin_table(cls) -> str:
    """The options the pytest plugin offers, then those it does not, and why."""
    lines = ["| option | ini key | default | what it does |", "| --- | --- | --- | --- |"]
    left_out = []
    for declared in options_of(cls):
        if declared.not_in_plugin:
            left_out.append(f"- `{declared.flag}`: {declared.not_in_plugin}.")
            continue
        default = f"`{declared.default_text}`" if declared.default_text is not None else ""
        cells = [
            _written(declared.plugin_flag, declared) + (" (repeatable)" if declared.repeatable else ""),
            f"`{declared.ini}`" + (" (one a line)" if declared.repeatable else ""),
            default,
            declared.plugin_help or declared.help,
        ]
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join([*lines, "", "Not offered, of `mockllama serve`'s options:", "", *left_out])
