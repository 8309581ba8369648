"""The ``mockllama`` command: thin click wrappers that parse, call and print."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
import sys
import textwrap
from pathlib import Path

import click
from aiohttp import web

from mockllama import __version__
from mockllama.app import ServeOptions, create_app
from mockllama.behaviours.fixed import verdict
from mockllama.behaviours.registry import BEHAVIOURS, DEFAULT_BEHAVIOUR
from mockllama.matching.keys import match_keys
from mockllama.recordings.cassettes import (
    RECORDING_SETS,
    CassetteError,
    Scenario,
    collection_paused,
    in_reading_order,
    load_scenarios,
)
from mockllama.recordings.record import DEFAULT_MAX_REPLY_BYTES
from mockllama.server.faults import help_lines as fault_help_lines
from mockllama.server.limits import UnparsableRequestLog, raise_open_file_limit
from mockllama.server.options import Option, OptionError, ReplayOptions, options_of
from mockllama.upstream.options import record_on_miss
from mockllama.upstream.record_on_miss import RecordOnMiss, with_record_dir
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from mockllama.wire.terminal import printable


class Parsed(click.ParamType):
    """An option's value, read by the option's own ``parse``: a bad one gets the same reason here
    as in the pytest plugin."""

    def __init__(self, declared: Option):
        self.declared = declared
        self.name = declared.metavar or declared.name

    def get_metavar(self, *args, **kwargs) -> str | None:  # the choices, as the registry has them now
        return self.declared.shown_metavar

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        try:
            return self.declared.parse(value)
        except ValueError as err:
            self.fail(str(err), param, ctx)


def click_option(declared: Option):
    """The click option of one declared option, named after its field."""
    if declared.switch:
        return click.option(declared.flag, declared.name, is_flag=True, help=declared.help)
    if declared.nargs > 1:  # kept as words; what they name is checked against the recordings (--fault)
        typed = {"type": (str,) * declared.nargs, "metavar": declared.metavar}
    else:
        typed = {"type": Parsed(declared)}
    default = declared.default_text
    return click.option(
        declared.flag,
        declared.name,
        multiple=declared.repeatable,
        default=default,
        show_default=default is not None,
        help=declared.help,
        **typed,
    )


def options_from(cls, *names: str):
    """A decorator that gives a command the options of ``cls`` (all, or those ``names``)."""
    chosen = [declared for declared in options_of(cls) if not names or declared.name in names]

    def decorate(command):
        for declared in reversed(chosen):
            command = click_option(declared)(command)
        return command

    return decorate


def _bad_option(err: OptionError) -> click.BadParameter:
    """An OptionError as click says a bad value, naming the option by its flag."""
    flags = {declared.name: declared for declared in options_of(ServeOptions)}

    def spell(name: str) -> str:
        return f"{flags[name].flag} {flags[name].metavar or ''}".rstrip()

    return click.BadParameter(err.told(spell), param_hint=f"'{flags[err.field].flag}'")


def _chosen(cassettes: tuple[Path, ...], recordings: str) -> list[Path]:
    """--cassettes, or else the bundled recordings --recordings names."""
    if cassettes and recordings != "stock":
        raise click.UsageError(f"--recordings {recordings} and --cassettes both choose the recordings: use one.")
    return list(cassettes) or [RECORDING_SETS[recordings]()]


def _load(directories: list[Path]) -> dict[str, Scenario]:
    """Load cassettes or stop with a message that names the file and the reason (exit 2)."""
    if not directories:
        return {}
    try:
        return load_scenarios(directories, keys_of=match_keys)
    except CassetteError as err:
        click.echo(f"mockllama: {printable(err)}", err=True)
        sys.exit(2)


def _served(options: ServeOptions, recording: RecordOnMiss | None) -> list[Path]:
    """The directories serve loads: --record-to is served too, once it holds a cassette."""
    if recording is None:
        chosen = _chosen(options.cassettes, options.recordings)
        return chosen if options.record_to is None else with_record_dir(chosen, options.record_to)
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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="mockllama")
def main() -> None:
    """Replay real llama-server recordings for offline tests of OpenAI-compatible clients.

    llama-server's /v1/responses reports every reply as "completed", even one cut off by
    max_output_tokens. mockllama replays real recordings as llama-server sent them (buggy),
    as a correct server would (fixed), or corrected in the full OpenAI wire format (spec),
    chosen per request.
    """


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


@main.command(help=SERVE_HELP)
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
        recording = record_on_miss(options)
        scenarios = _load(_served(options, recording))
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
        where = {"sock": _bound_socket(host)} if port == 0 else {"host": host, "port": port}
    except OSError as err:
        click.echo(f"mockllama: cannot listen on {host}:{port}: {err.strerror or err}. Try another --port.", err=True)
        sys.exit(2)
    bound = where["sock"].getsockname()[1] if port == 0 else port
    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{bound}"
    width = max(len(name) for name in BEHAVIOURS) + 2

    def listening(_aiohttp_banner: str) -> None:
        """run_app calls this once the socket is bound: only then are the URLs true."""
        click.echo(base)  # first, alone: what a test setup reads to find the server
        click.echo(f"mockllama {__version__}: {len(scenarios)} scenarios, default behaviour {options.behaviour}")
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
        web.run_app(app, print=listening, **where, **access)
    except OSError as err:
        click.echo(f"mockllama: cannot listen on {host}:{port}: {err.strerror or err}. Try another --port.", err=True)
        sys.exit(2)


def _bound_socket(host: str) -> socket.socket:
    """A socket bound to a free port of ``host``, for aiohttp to listen on."""
    family = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0][0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.bind((host, 0))
    return sock


def _responses_status(scenario: Scenario) -> str:
    interaction = scenario.find("POST", RESPONSES_PATH, False)
    if interaction is None:
        return "-"
    if interaction.status != 200:
        return f"HTTP {interaction.status}"
    body = interaction.body_json
    return str(body.get("status")) if isinstance(body, dict) else "?"


def scenario_row(scenario: Scenario) -> dict:
    """What `mockllama scenarios` shows of one scenario."""
    responses = scenario.find("POST", RESPONSES_PATH, False)
    limited = next((i for i in scenario.interactions if i.limit is not None), None)
    fixed_status = "-"
    if responses is not None and responses.status == 200:
        fixed_status = "incomplete" if verdict(scenario, responses).cut else "completed"
    twin = scenario.find("POST", CHAT_PATH, False)
    return {
        "name": scenario.name,
        "endpoints": scenario.endpoints,
        "limit": limited.limit if limited else None,
        "responses_status": _responses_status(scenario),
        "fixed_status": fixed_status,
        "twin_finish_reason": scenario.twin_finish_reason(responses) if responses and twin else None,
        "turns": scenario.turns,
        "setup": scenario.setup,
        "source": str(scenario.source),
    }


@main.command()
@options_from(ReplayOptions, "cassettes", "recordings")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per scenario instead of a table.")
def scenarios(cassettes, recordings, as_json) -> None:
    """List the scenarios: turns, limit, recorded Responses status, the chat twin's finish_reason, the
    server set-up recorded from (serve --setup), endpoints.

    A scenario with more than one turn is a conversation: each request is answered with the turn
    its own input asks for (1 + the model replies it already carries)."""
    rows = [scenario_row(s) for s in in_reading_order(_load(_chosen(cassettes, recordings)))]
    if as_json:
        for row in rows:
            click.echo(json.dumps(row))
        return
    header = ("scenario", "turns", "limit", "responses", "fixed", "twin", "setup", "endpoints")
    cells = [
        (
            r["name"],
            str(r["turns"]),
            "-" if r["limit"] is None else str(r["limit"]),
            r["responses_status"],
            r["fixed_status"],
            r["twin_finish_reason"] or "-",
            r["setup"],
            " ".join(r["endpoints"]),
        )
        for r in rows
    ]
    lines = [header] + [tuple(printable(cell) for cell in row) for row in cells]  # file names are untrusted
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    for line in lines:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(line, widths)) + "  " + line[-1])


CATALOGUE_HELP = """\b
The catalogue is a JSON file; the default one (shipped with mockllama) reproduces the
bundled scenarios. Each scenario is either a /v1/responses request, which is sent with
its chat twin (input -> messages, max_output_tokens -> max_tokens, tools converted),
each streamed and not, or a list of raw requests:

\b
  {"scenarios": [
    {"name": "count-cut-16",
     "responses": {"model": "x", "input": "Count to 100.",
                   "max_output_tokens": 16, "temperature": 0}},
    {"name": "messages-cut-8",
     "requests": [{"method": "POST", "path": "/v1/messages",
                   "json": {"model": "x", "max_tokens": 8, "stream": false,
                            "messages": [{"role": "user", "content": "Hi"}]}}]},
    {"name": "bad-json",
     "requests": [{"path": "/v1/responses", "data": "{\\"input\\": ",
                   "headers": {"Content-Type": "application/json"}}]}
  ]}
"""


@main.command(epilog=CATALOGUE_HELP)
@click.option(
    "--server",
    "server_url",
    required=True,
    metavar="URL",
    help="Base URL of the live llama-server, e.g. http://127.0.0.1:8080 (no /v1).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory for the cassettes (NAME.yaml) and provenance.json; created if missing.",
)
@click.option(
    "--catalogue",
    "catalogue_path",
    metavar="FILE|default|forced-thinking",
    help="Scenario catalogue (JSON), or a bundled one by name: default (the bundled stock scenarios) "
    "or forced-thinking (the reasoning scenarios; needs a server started with "
    "scripts/llama-server.sh run --setup smollm2-135m-forced-thinking PORT). A catalogue with a "
    '"setup" is only recorded from a server running that set-up\'s chat template.',
)
@click.option("--scenario", "only", multiple=True, metavar="NAME", help="Record only this scenario; repeatable.")
@click.option("--server-command", help="The llama-server command line, kept in provenance.json.")
@click.option(
    "--server-patch",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The patch the llama-server was built with (scripts/llama-server.sh --patched); its file "
    "name and sha256 are kept in provenance.json.",
)
@click.option("--api-key", envvar="MOCKLLAMA_API_KEY", help="Sent as a Bearer token; never written to disk.")
@click.option(
    "--timeout",
    default=300.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds to wait for any one reply.",
)
@click.option(
    "--max-reply-bytes",
    default=DEFAULT_MAX_REPLY_BYTES,
    show_default=True,
    type=click.IntRange(1),
    help="A larger reply fails its scenario (no cassette is written for it).",
)
def record(
    server_url, out_dir, catalogue_path, only, server_command, server_patch, api_key, timeout, max_reply_bytes
) -> None:
    """Record scenarios from a live llama-server into vcrpy cassettes, one per scenario.

    Each cassette is written to a temporary file and renamed into place when complete, so an
    interrupted run loses no old cassette. No credential is written: headers named like one
    (Authorization, *key*, *token*, Cookie, ...) are dropped, a user:password in --server is
    sent as Basic auth but never stored, and secrets in --server-command are replaced by
    REDACTED. Redirects are reported, never followed. Exit 2 when the server is down, is not
    llama-server, answers something unreadable or a redirect, or a reply is over --max-reply-bytes.
    """
    import aiohttp

    from mockllama.recordings.catalogue import CatalogueError, load_catalogue, load_setup
    from mockllama.recordings.record import RecordError, probe, record_scenario, require_setup, write_provenance
    from mockllama.wire.scrub import split_credentials
    from mockllama.wire.untrusted_http import url_problem

    try:
        entries, setup = load_catalogue(catalogue_path), load_setup(catalogue_path)
    except CatalogueError as err:
        click.echo(f"mockllama record: {printable(err)}", err=True)
        sys.exit(2)
    unknown = sorted(set(only) - {entry.name for entry in entries})
    if unknown:
        names = ", ".join(entry.name for entry in entries)
        click.echo(f"mockllama record: no scenario {', '.join(unknown)} in the catalogue; it has: {names}", err=True)
        sys.exit(2)
    entries = [entry for entry in entries if not only or entry.name in only]
    problem = url_problem(server_url)
    if problem:
        click.echo(f"mockllama record: --server {problem}", err=True)
        sys.exit(2)
    url, user, password = split_credentials(server_url.rstrip("/"))
    if user is not None and api_key:
        click.echo(
            "mockllama record: --server carries a user:password and --api-key is given too; "
            "a server takes one Authorization: keep only one of them.",
            err=True,
        )
        sys.exit(2)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    auth = aiohttp.BasicAuth(user, password or "") if user is not None else None

    async def run():
        info = await probe(url, timeout, headers, max_reply_bytes, auth)
        require_setup(info, setup)
        # Everything the server said (its build, model, each reply's status) is printed escaped.
        click.echo(
            printable(
                f"recording {len(entries)} scenarios from {url} "
                f"(build {info.props.get('build_info')}, model {info.model}) into {out_dir}"
            )
        )
        out_dir.mkdir(parents=True, exist_ok=True)
        outcomes = []
        with click.progressbar(
            length=len(entries), label="recording", item_show_func=lambda text: text and printable(text)
        ) as bar:
            for entry in entries:
                outcomes.append(await record_scenario(entry, url, out_dir, timeout, headers, max_reply_bytes, auth))
                bar.update(1, f"{entry.name}: {outcomes[-1].summary}")
        for outcome in outcomes:
            click.echo(printable(f"  {outcome.scenario:32} {outcome.summary}"))
        path = write_provenance(
            out_dir, url, info, outcomes, str(catalogue_path or "default"), server_command, server_patch, setup=setup
        )
        failed = [outcome.scenario for outcome in outcomes if outcome.failed]
        click.echo(f"wrote {len(outcomes) - len(failed)} cassettes and {path}")
        return failed

    try:
        failed = asyncio.run(run())
    except RecordError as err:
        click.echo(f"mockllama record: {printable(err)}", err=True)
        sys.exit(2)
    if failed:
        click.echo(f"mockllama record: not recorded: {', '.join(failed)} (see above)", err=True)
        sys.exit(2)


@main.command()
@click.argument("url")
@click.option(
    "--probe",
    "probe",
    type=click.Choice(["text", "tool", "stream", "reasoning", "all"]),
    default="text",
    show_default=True,
    help="text: text-cut-8; tool: tool-cut-20; stream: both, streamed; reasoning: thinking-cut-12, a "
    "reply cut while the model thinks (exit 2 if the server does not think); all: text, tool "
    "and stream. Each also sends its scenario with room to finish (text-finishes, tool-finishes, "
    "thinking-finishes).",
)
@click.option("--model", help='The "model" to send (default: the recorded "x"; set it for servers that check).')
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with every field and the verdict.")
@click.option(
    "--timeout",
    default=60.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds for each request, from connecting to the last byte of the reply.",
)
def check(url, probe, model, as_json, timeout) -> None:
    """Tell whether URL reports a reply cut off by max_output_tokens as cut off.

    Sends requests that cannot finish within their limit to URL/v1/responses, and their twins
    to URL/v1/chat/completions, then judges each aspect of the cut reply on its own: status,
    incomplete_details.reason, the cut item's status, completed_at, and in a stream the
    terminal event and the cut call's function_call_arguments.done. Each probe also sends a
    request with room to finish, which must be reported "completed": a status that says
    "incomplete" to every reply tells a client nothing. The verdict names the aspects that
    fail, and the servers whose signals they are. URL is the server's base URL, e.g.
    http://127.0.0.1:8080 or http://127.0.0.1:18090/buggy; a user:password in it is sent as
    Basic auth and a ?query with every request, and neither is printed.

    \b
    Exit codes:
      0  every aspect of every cut-off reply reports the cut: "incomplete", reason
         "max_output_tokens", the cut item "incomplete", no completed_at, a stream that
         ends with one response.incomplete and sends arguments.done for a cut call; and
         every reply that finished says "completed"
      1  the server reports it wrongly: an aspect says a cut-off reply finished (status or
         the cut item "completed", a null status, a completed_at time, a stream that ends
         with response.completed or sends two terminal events: the llama-server bug and the
         variants other servers ship), a reply that finished says "incomplete", or an
         aspect is wrong (e.g. reason "length", no reason, another status); --json's
         verdict says which: "dishonest" or "wrong"
      2  can't tell: a bad URL, unreachable, an HTTP error, malformed HTTP, not JSON, JSON
         that RFC 8259 rejects (NaN, 1e999, a key twice), not the expected shape, a
         timeout, a reply over 8 MiB, a chat twin that did not say "length" (the reply
         finished, which proves nothing), or, for --probe reasoning, a reply with no
         reasoning item
    """
    from mockllama.check import run

    report = run(url, probes=[probe], model=model, timeout=timeout)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        for line in report.lines():
            click.echo(line)
    sys.exit(report.exit_code)


@main.command()
@click.argument("scenario", required=False)
@options_from(ReplayOptions, "cassettes", "recordings")
@click.option(
    "--journal",
    "journal_url",
    metavar="URL",
    help="Instead, show the last requests a running mockllama at URL answered, e.g. http://127.0.0.1:18090.",
)
@click.option(
    "--last", default=10, show_default=True, type=click.IntRange(0), help="How many requests --journal shows."
)
@click.option(
    "--timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds --journal may take in all, from connecting to the last byte.",
)
def explain(scenario, cassettes, recordings, journal_url, last, timeout) -> None:
    """Show what a scenario teaches: the request, the chat twin's finish_reason, buggy against
    fixed and spec for the body and the stream's last events, and what a client should check.

    Without SCENARIO, every scenario. Colour only when stdout is a terminal. With --journal URL,
    what a client sent instead: the last requests that server answered, how, and their bodies.
    """
    from mockllama.teaching.explain import journal_lines, render, stories, story
    from mockllama.teaching.journal_client import JournalUnreadable, fetch_journal
    from mockllama.wire.scrub import scrub_text

    if journal_url is not None:
        try:
            entries = fetch_journal(journal_url, last, timeout)
            lines = journal_lines(entries)
        except JournalUnreadable as err:
            click.echo(
                printable(
                    f"mockllama explain: cannot read the journal of {scrub_text(journal_url)}: {err}. "
                    "Is `mockllama serve` running there?"
                ),
                err=True,
            )
            sys.exit(2)
        for line in lines:
            click.echo(line)
        return

    scenarios = _load(_chosen(cassettes, recordings))
    if scenario is not None and scenario not in scenarios:
        click.echo(
            printable(f"mockllama explain: no scenario named {scenario!r}; known: {', '.join(sorted(scenarios))}"),
            err=True,
        )
        sys.exit(2)
    told = [story(scenarios[scenario])] if scenario else stories(scenarios)
    for one in told:
        for line in render(one):
            click.echo(line)
