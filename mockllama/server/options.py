"""The replay server's options, each declared once (``server.option_fields``): its own, and those
of every outgoing step, which each step's module declares (``server.steps``). ``ReplayOptions`` is
both; ``upstream.options`` declares the recording options the same way, and
``mockllama.app.ServeOptions`` is the two together. The options tables in the docs are made here,
by loops over ``options_of``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mockllama.behaviours.registry import BEHAVIOURS, DEFAULT_BEHAVIOUR, unknown_behaviour
from mockllama.recordings.cassettes import RECORDING_SETS
from mockllama.server.cors import check_origin
from mockllama.server.journal import DEFAULT_BODY_BUDGET, DEFAULT_BODY_CAP, DEFAULT_JOURNAL_SIZE
from mockllama.server.option_fields import Option, OptionError, one_of, option, options_of, seconds, whole
from mockllama.server.steps.registry import assembled_options, check_options

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 18090
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
# Seconds a request body may take to arrive in full once its head is in, as nginx's
# client_body_timeout (60 s).
DEFAULT_BODY_TIMEOUT = 60.0


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
class ServerOptions:
    """The replay server's own options: those no outgoing step declares."""

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


# Every outgoing step's options, in the steps' order (``server.steps.registry``).
StepOptions: Any = assembled_options(beside=ServerOptions)


@dataclass(frozen=True)
class ReplayOptions(StepOptions, ServerOptions):
    """The options of the replay server, as ``serve`` takes them: its own (``ServerOptions``), then
    each outgoing step's; ``create_replay_app`` runs with them."""

    def __post_init__(self) -> None:
        """Repeated options as tuples, whatever sequence was given; then each step's own check."""
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
        check_options(self)


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
