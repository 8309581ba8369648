"""The ``mockllama`` command: thin click wrappers that parse, call and print."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
import sys
from pathlib import Path

import click
from aiohttp import web

from mockllama import __version__
from mockllama.app import create_app
from mockllama.behaviours.fixed import verdict
from mockllama.behaviours.replay import BEHAVIOURS, DEFAULT_BEHAVIOUR
from mockllama.matching.keys import match_keys
from mockllama.recordings.cassettes import RECORDING_SETS, CassetteError, Scenario, collection_paused, load_scenarios
from mockllama.recordings.record import DEFAULT_MAX_REPLY_BYTES
from mockllama.server.app import DEFAULT_BODY_TIMEOUT, DEFAULT_HOST, DEFAULT_MAX_BODY_BYTES, DEFAULT_PORT
from mockllama.server.cors import check_origin
from mockllama.server.faults import FaultPlan
from mockllama.server.faults import usage as fault_usage
from mockllama.server.journal import DEFAULT_JOURNAL_SIZE
from mockllama.server.limits import UnparsableRequestLog, raise_open_file_limit
from mockllama.server.pacing import parse_pace
from mockllama.upstream.client import DEFAULT_TIMEOUT, parse_upstream
from mockllama.upstream.record_mode import parse_record_mode
from mockllama.upstream.record_on_miss import DEFAULT_RECORD_DIR, RecordOnMiss, with_record_dir
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from mockllama.wire.terminal import printable

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


def recordings_option(command):
    return click.option(
        "--recordings",
        type=click.Choice(list(RECORDING_SETS)),
        default="stock",
        show_default=True,
        help=RECORDINGS_HELP,
    )(command)


def _load(cassette_dirs: tuple[Path, ...], recordings: str = "stock") -> dict[str, Scenario]:
    """Load cassettes or stop with a message that names the file and the reason (exit 2)."""
    if cassette_dirs and recordings != "stock":
        raise click.UsageError(f"--recordings {recordings} and --cassettes both choose the recordings: use one.")
    try:
        return load_scenarios(list(cassette_dirs) or [RECORDING_SETS[recordings]()], keys_of=match_keys)
    except CassetteError as err:
        click.echo(f"mockllama: {printable(err)}", err=True)
        sys.exit(2)


def _load_some(directories: list[Path]) -> dict[str, Scenario]:
    """Like _load, but no directory at all means no scenarios, not the bundled ones."""
    return _load(tuple(directories)) if directories else {}


def _record_on_miss(upstream, record_to, record_mode, timeout, max_reply_bytes=None):
    """serve's recording options, checked together; None when nothing is to be recorded."""
    if upstream is None:
        if record_to is not None or record_mode in ("new", "new_episodes", "all") or max_reply_bytes is not None:
            raise click.UsageError(
                "--record-to, --record-mode new|all and --max-reply-bytes need --upstream URL, "
                "the llama-server to record from. To replay a directory, use --cassettes DIR."
            )
        return None
    try:
        parsed = parse_upstream(upstream, timeout)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--upstream") from None
    mode = parse_record_mode(record_mode or "new")
    return RecordOnMiss(parsed, Path(record_to or DEFAULT_RECORD_DIR), mode, max_reply_bytes or DEFAULT_MAX_REPLY_BYTES)


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


@main.command()
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address to bind. Loopback unless you say so.")
@click.option(
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to bind. 0: a free port, named in the URL on the first line printed.",
)
@click.option(
    "--behaviour",
    type=click.Choice(list(BEHAVIOURS)),
    default=DEFAULT_BEHAVIOUR,
    show_default=True,
    help="Behaviour for requests without a /buggy, /fixed or /spec path prefix or an X-Mockllama-Behaviour header.",
)
@click.option("--cassettes", "cassette_dirs", multiple=True, type=click.Path(path_type=Path), help=CASSETTES_HELP)
@recordings_option
@click.option(
    "--fallback",
    metavar="SCENARIO",
    help="Answer requests that match no recording with this scenario instead of a 404.",
)
@click.option(
    "--setup",
    metavar="NAME",
    help="The server set-up whose recordings answer requests by their prompt (`mockllama scenarios` shows each "
    "scenario's); the others answer only when chosen by name. Default: the default set-up, e.g. "
    "--setup smollm2-135m-forced-thinking serves the forced-thinking recordings.",
)
@click.option(
    "--max-body-bytes",
    default=DEFAULT_MAX_BODY_BYTES,
    show_default=True,
    type=click.IntRange(1),
    help="Larger request bodies get HTTP 413.",
)
@click.option(
    "--body-timeout",
    default=DEFAULT_BODY_TIMEOUT,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds a request body may take to arrive in full once its head is in; past it, HTTP 408 "
    "(as nginx's client_body_timeout).",
)
@click.option(
    "--pace",
    default="instant",
    show_default=True,
    metavar="instant|recorded|FACTOR",
    help="instant: no waiting. recorded: streams keep the recording's own timing (prompt_ms, then "
    "predicted_per_token_ms per delta). A number scales that: 2 is twice as fast.",
)
@click.option(
    "--journal-size",
    default=DEFAULT_JOURNAL_SIZE,
    show_default=True,
    type=click.IntRange(0),
    help="Keep the last N requests in the journal (GET /_mockllama/journal; DELETE clears it). 0: no journal.",
)
@click.option(
    "--fault",
    "faults",
    type=(str, str),
    multiple=True,
    metavar="SCENARIO FAULT",
    help="Apply FAULT to every reply of SCENARIO ('*': every scenario); repeatable. X-Mockllama-Fault "
    f"overrides it per request. Faults: {fault_usage()}.",
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    metavar="ORIGIN",
    help="Allow cross-origin browser requests only from this origin (repeatable), e.g. http://localhost:5173. "
    "Default: any origin, as llama-server.",
)
@click.option(
    "--access-log", is_flag=True, help="Print one line per request (off by default: it costs ~20% of throughput)."
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Answer only requests whose Host header names NAME (port ignored; repeatable), e.g. "
    "--allowed-host localhost --allowed-host 127.0.0.1; others get HTTP 403. Default: any "
    "host, as llama-server. Guards against DNS rebinding by web pages.",
)
@click.option(
    "--upstream",
    metavar="URL",
    help="A live llama-server (base URL, no /v1) to send what no recording answers to, and record. "
    "Credentials in the URL are sent as Basic auth and never written.",
)
@click.option(
    "--record-to",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help=f"Where --upstream recordings go, one cassette per scenario; served too. Default: ./{DEFAULT_RECORD_DIR}",
)
@click.option(
    "--record-mode",
    type=click.Choice(["none", "new", "new_episodes", "all"]),
    help="none: replay only. new (vcrpy's new_episodes): record what no recording matches. "
    "all: record everything again. Default: new with --upstream.",
)
@click.option(
    "--upstream-timeout",
    default=DEFAULT_TIMEOUT,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds to wait for the upstream's next bytes; past it, a 504.",
)
@click.option(
    "--max-reply-bytes",
    type=click.IntRange(1),
    metavar="N",
    help=f"With --upstream: an upstream reply larger than N bytes is cut off there, answered with a "
    f"502 and not recorded. Default: {DEFAULT_MAX_REPLY_BYTES} (64 MiB), as `record`.",
)
def serve(
    host,
    port,
    behaviour,
    cassette_dirs,
    recordings,
    fallback,
    setup,
    max_body_bytes,
    body_timeout,
    pace,
    journal_size,
    faults,
    cors_origins,
    access_log,
    allowed_hosts,
    upstream,
    record_to,
    record_mode,
    upstream_timeout,
    max_reply_bytes,
) -> None:
    """Serve the recordings over HTTP until Ctrl-C.

    \b
    Behaviour, per request, first that applies:
      1. the path prefix:  /buggy/v1/...  /fixed/v1/...  /spec/v1/...
      2. the header:       X-Mockllama-Behaviour: buggy|fixed|spec
      3. --behaviour (default buggy, a faithful llama-server)

    \b
    buggy: the recordings byte for byte, "completed" even when cut off.
    fixed: cut replies say "incomplete", llama-server's event format otherwise kept.
    spec:  the fixed statuses in the full OpenAI Responses wire format, which the
           openai SDK's responses.stream() helper can consume.

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
      disconnect=N        drop the connection after N stream events
      disconnect-bytes=N  drop the connection after N body bytes
      truncate-stream=N   end the stream cleanly after N events, no terminal event
      truncate-json       a complete reply whose JSON is cut in half
      stall=MS            wait MS ms before the first byte
      stall-between=MS    wait MS ms before each later stream event
      status=CODE         llama-server's own recorded error reply for CODE

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
        -d '{"model":"x","input":"Count from 1 to 200, separated by spaces.","max_output_tokens":8,"temperature":0}'
    """
    try:
        factor = parse_pace(pace)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--pace") from None
    for origin in cors_origins:
        try:
            check_origin(origin)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="--cors-origin") from None
    # What is loaded lives as long as the server: no collection walks it while it is made, nor after
    # (with 10,000 recordings, one full collection takes 0.6 s).
    with collection_paused(keep=True):
        recording = _record_on_miss(upstream, record_to, record_mode, upstream_timeout, max_reply_bytes)
        if recording is None:
            scenarios = _load(cassette_dirs, recordings)
        elif recordings != "stock":
            raise click.UsageError(
                f"--recordings {recordings} chooses bundled recordings, which --upstream does not "
                "serve: it serves --record-to and --cassettes."
            )
        else:  # only what the user names: a bundled recording must not answer for their upstream
            scenarios = _load_some(with_record_dir(list(cassette_dirs), recording.record_to))
        try:
            FaultPlan.build(scenarios, dict(faults))
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="--fault") from None
        try:
            app = create_app(
                scenarios,
                behaviour=behaviour,
                fallback=fallback,
                setup=setup,
                max_body_bytes=max_body_bytes,
                pace=factor,
                journal_size=journal_size,
                allowed_hosts=allowed_hosts,
                faults=dict(faults),
                cors_origins=cors_origins,
                record_on_miss=recording,
                body_timeout=body_timeout,
            )
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="--setup" if "set-up" in str(err) else "--fallback") from None
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

    def listening(_aiohttp_banner: str) -> None:
        """run_app calls this once the socket is bound: only then are the URLs true."""
        click.echo(base)  # first, alone: what a test setup reads to find the server
        click.echo(f"mockllama {__version__}: {len(scenarios)} scenarios, default behaviour {behaviour}")
        for name in BEHAVIOURS:
            click.echo(f"  {name + ':':7} {base}/{name}/v1")
        click.echo(f"  default: {base}/v1  (X-Mockllama-Behaviour picks per request)")
        click.echo(f"  teaching page: {base}/")
        if journal_size:
            click.echo(f"  journal: {base}/_mockllama/journal  (last {journal_size} requests)")
        if recording is not None:
            click.echo(
                f"  record mode {recording.mode.value}: misses go to {recording.upstream.url}, "
                f"recorded into {recording.record_to}"
            )
        click.echo("Press Ctrl-C to stop.")

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("aiohttp.server").addFilter(UnparsableRequestLog())  # one line each, no traceback
    raise_open_file_limit()  # idle clients each hold a socket; 1024 is soon reached
    access = {"access_log_format": '%a "%r" %s %b'} if access_log else {"access_log": None}
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
@click.option("--cassettes", "cassette_dirs", multiple=True, type=click.Path(path_type=Path), help=CASSETTES_HELP)
@recordings_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per scenario instead of a table.")
def scenarios(cassette_dirs, recordings, as_json) -> None:
    """List the scenarios: turns, limit, recorded Responses status, the chat twin's finish_reason, the
    server set-up recorded from (serve --setup), endpoints.

    A scenario with more than one turn is a conversation: each request is answered with the turn
    its own input asks for (1 + the model replies it already carries)."""
    rows = [scenario_row(s) for s in _load(cassette_dirs, recordings).values()]
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
        click.echo(f"mockllama record: {err}", err=True)
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
        click.echo(
            f"recording {len(entries)} scenarios from {url} "
            f"(build {info.props.get('build_info')}, model {info.model}) into {out_dir}"
        )
        out_dir.mkdir(parents=True, exist_ok=True)
        outcomes = []
        with click.progressbar(length=len(entries), label="recording", item_show_func=lambda s: s) as bar:
            for entry in entries:
                outcomes.append(await record_scenario(entry, url, out_dir, timeout, headers, max_reply_bytes, auth))
                bar.update(1, f"{entry.name}: {outcomes[-1].summary}")
        for outcome in outcomes:
            click.echo(f"  {outcome.scenario:32} {outcome.summary}")
        path = write_provenance(
            out_dir, url, info, outcomes, str(catalogue_path or "default"), server_command, server_patch, setup=setup
        )
        failed = [outcome.scenario for outcome in outcomes if outcome.failed]
        click.echo(f"wrote {len(outcomes) - len(failed)} cassettes and {path}")
        return failed

    try:
        failed = asyncio.run(run())
    except RecordError as err:
        click.echo(f"mockllama record: {err}", err=True)
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
    "and stream.",
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
    terminal event and the cut call's function_call_arguments.done. The verdict names the
    aspects that fail, and the variant when one seen in another server fits. URL is the
    server's base URL, e.g. http://127.0.0.1:8080 or http://127.0.0.1:18090/buggy; a
    user:password in it is sent as Basic auth and a ?query with every request, and neither
    is printed.

    \b
    Exit codes:
      0  every aspect of every cut-off reply reports the cut: "incomplete", reason
         "max_output_tokens", the cut item "incomplete", no completed_at, a stream that
         ends with response.incomplete and sends arguments.done for a cut call
      1  an aspect says a cut-off reply finished: status or the cut item "completed", a
         completed_at time, or a stream that ends with response.completed (the
         llama-server bug, and the variants other servers ship)
      2  can't tell: a bad URL, unreachable, an HTTP error, malformed HTTP, not JSON, JSON
         that RFC 8259 rejects (NaN, 1e999, a key twice), not the expected shape, a
         timeout, a reply over 8 MiB, a chat twin that did not say "length" (the reply
         finished, which proves nothing), a reply that says neither (e.g. "incomplete"
         without a reason), or, for --probe reasoning, a reply with no reasoning item
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
@click.option("--cassettes", "cassette_dirs", multiple=True, type=click.Path(path_type=Path), help=CASSETTES_HELP)
@recordings_option
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
def explain(scenario, cassette_dirs, recordings, journal_url, last, timeout) -> None:
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

    scenarios = _load(cassette_dirs, recordings)
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
