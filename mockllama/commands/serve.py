"""``mockllama serve``: the recordings over HTTP until Ctrl-C, with every option ``ServeOptions``
declares."""

from __future__ import annotations

import ipaddress
import logging
import socket
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from aiohttp import web

from mockllama import __version__
from mockllama.app import create_app, recording_of
from mockllama.behaviours.registry import BEHAVIOURS, DEFAULT_BEHAVIOUR
from mockllama.commands.common import chosen, load, options_from
from mockllama.options import ServeOptions
from mockllama.recordings.cassettes import collection_paused
from mockllama.server.faults import help_lines as fault_help_lines
from mockllama.server.limits import UnparsableRequestLog, raise_open_file_limit
from mockllama.server.option_fields import OptionError, options_of
from mockllama.server.stopping import HANDLERS_GRACE
from mockllama.upstream.options import with_record_dir

if TYPE_CHECKING:
    from mockllama.upstream.record_on_miss import RecordOnMiss


def _bad_option(err: OptionError) -> click.BadParameter:
    """An OptionError as click says a bad value, naming the option by its flag."""
    flags = {declared.name: declared for declared in options_of(ServeOptions)}

    def spell(name: str) -> str:
        return f"{flags[name].flag} {flags[name].metavar or ''}".rstrip()

    return click.BadParameter(err.told(spell), param_hint=f"'{flags[err.field].flag}'")


def _served(options: ServeOptions, recording: RecordOnMiss | None) -> list[Path]:
    """The directories serve loads: --record-to is served too, once it holds a cassette."""
    if recording is None:
        named = chosen(options.cassettes, options.recordings)
        return named if options.record_to is None else with_record_dir(named, options.record_to)
    if options.recordings != "stock":
        raise click.UsageError(
            f"--recordings {options.recordings} chooses bundled recordings, which --upstream does not "
            "serve: it serves --record-to and --cassettes."
        )
    # only what the user names: a bundled recording must not answer for their upstream
    return with_record_dir(list(options.cassettes), recording.record_to)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


HELP_WIDTH = 86


def _folded(first: str, text: str) -> list[str]:
    """``text`` after ``first``, folded to the help's width, later lines indented as far."""
    return textwrap.wrap(
        text, HELP_WIDTH, initial_indent=first, subsequent_indent=" " * len(first), break_on_hyphens=False
    )


def behaviours_help() -> str:
    """serve's help on behaviours, from the registry."""
    names = list(BEHAVIOURS)
    width = max(len(name) for name in names) + 2
    lines = [
        "\b",
        "Behaviour, per request, first that applies:",
        *_folded("  1. the path prefix:  ", "  ".join(f"/{name}/v1/..." for name in names)),
        *_folded("  2. the header:       ", f"X-Mockllama-Behaviour: {'|'.join(names)}"),
        f"  3. --behaviour (default {DEFAULT_BEHAVIOUR}, a faithful llama-server)",
        "",
        "\b",
    ]
    for behaviour in BEHAVIOURS.values():
        lines += _folded(f"{behaviour.name + ':':{width}}", behaviour.plain_description + ".")
    return "\n".join(lines)


def faults_help() -> str:
    """serve's list of faults, from the registry (server.faults.KINDS): one line a fault."""
    return "\n".join(f"  {line}" for line in fault_help_lines())


SERVE_HELP = f"""Serve the recordings over HTTP until Ctrl-C.

{behaviours_help()}

\b
Scenario, per request: the header X-Mockllama-Scenario: NAME, or "model": "NAME",
or else the recording whose request body matches (model, stream_options, user and
metadata are ignored). `mockllama scenarios` lists the names.

\b
Journal: GET /_mockllama/journal lists the last --journal-size requests (method, path,
behaviour, scenario, how it was selected, status, bytes sent, whether the stream finished,
the request body); ?scenario=NAME and ?since=ID filter it, DELETE clears it.

\b
Faults, per request with the header X-Mockllama-Fault: FAULT (echoed in the
reply), or per scenario with --fault SCENARIO FAULT:
{faults_help()}

\b
Record your own client's traffic: what no recording answers goes to --upstream,
is recorded into --record-to, and is served from then on (no restart):
  mockllama serve --upstream http://127.0.0.1:8080 --record-to my-cassettes
  mockllama serve --cassettes my-cassettes          # later, offline
--record-to (and only it, with any --cassettes you add) is served then.

\b
Once listening, the first line printed is the base URL alone, with the port really
bound (http://127.0.0.1:PORT), for a test setup that starts mockllama with --port 0.

\b
Example:
  mockllama serve &
  curl -s localhost:18090/fixed/v1/responses \\
    -d '{{"model":"x","input":"Count from 1 to 200, separated by spaces.","max_output_tokens":8,"temperature":0}}'
"""


def counted(scenarios: dict) -> str:
    """How many scenarios are served, a sweep counted once (and its positions said apart)."""
    sweeps = {scenario.sweep for scenario in scenarios.values() if scenario.sweep is not None}
    positions = sum(1 for scenario in scenarios.values() if scenario.sweep is not None)
    single = len(scenarios) - positions
    if not sweeps:
        return f"{single} scenarios"
    return f"{single + len(sweeps)} scenarios, {len(sweeps)} of them sweeps of {positions} positions in all"


@click.command(help=SERVE_HELP)
@options_from(ServeOptions)
def serve(**given) -> None:
    """Serve the recordings over HTTP until Ctrl-C (SERVE_HELP says how); ``given``: the options,
    one per ``ServeOptions`` field."""
    try:
        options = ServeOptions(**{name: value for name, value in given.items() if value is not None})
    except OptionError as err:
        raise _bad_option(err) from None
    # What is loaded lives as long as the server: no collection walks it while it is made, nor after
    # (with 10,000 recordings, one full collection takes 0.6 s).
    with collection_paused(keep=True):
        recording = recording_of(options)
        scenarios = load(_served(options, recording))
        try:
            app = create_app(scenarios, options, record_on_miss=recording)
        except OptionError as err:
            raise _bad_option(err) from None
    host, port = options.host, options.port
    if not _is_loopback(host):
        click.echo(
            f"mockllama: warning: binding {host}, which is not loopback: anyone who can reach it can use it.", err=True
        )
    try:
        # --port 0: bind here, so the URLs printed name the port the system chose
        where: dict[str, Any] = {"sock": _bound_socket(host)} if port == 0 else {"host": host, "port": port}
    except OSError as err:
        click.echo(f"mockllama: cannot listen on {host}:{port}: {err.strerror or err}. Try another --port.", err=True)
        sys.exit(2)
    bound = where["sock"].getsockname()[1] if port == 0 else port
    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{bound}"
    width = max(len(name) for name in BEHAVIOURS) + 2

    def listening(_aiohttp_banner: str) -> None:
        """run_app calls this once the socket is bound: only then are the URLs true."""
        click.echo(base)  # first, alone: what a test setup reads to find the server
        click.echo(f"mockllama {__version__}: {counted(scenarios)}, default behaviour {options.behaviour}")
        for name in BEHAVIOURS:
            click.echo(f"  {name + ':':{width}} {base}/{name}/v1")
        click.echo(f"  {'default:':{width}} {base}/v1  (X-Mockllama-Behaviour picks per request)")
        click.echo(f"  teaching page: {base}/")
        if options.journal_size:
            click.echo(f"  journal: {base}/_mockllama/journal  (last {options.journal_size} requests)")
        if recording is not None:
            click.echo(
                f"  record mode {recording.mode.value}: misses go to {recording.upstream.url}, "
                f"recorded into {recording.record_to}"
            )
        click.echo("Press Ctrl-C to stop.")

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("aiohttp.server").addFilter(UnparsableRequestLog())  # one line each, no traceback
    raise_open_file_limit()  # idle clients each hold a socket; 1024 is soon reached
    access = {"access_log_format": '%a "%r" %s %b'} if options.access_log else {"access_log": None}
    try:
        # SIGTERM and Ctrl-C end every wait (server.stopping); what still runs is then bounded too
        web.run_app(app, print=listening, shutdown_timeout=HANDLERS_GRACE, **where, **access)
    except OSError as err:
        click.echo(f"mockllama: cannot listen on {host}:{port}: {err.strerror or err}. Try another --port.", err=True)
        sys.exit(2)


def _bound_socket(host: str) -> socket.socket:
    """A socket bound to a free port of ``host``, for aiohttp to listen on."""
    family = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0][0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.bind((host, 0))
    return sock
