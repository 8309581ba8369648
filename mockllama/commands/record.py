"""``mockllama record``: a scenario catalogue recorded from a live llama-server into vcrpy cassettes."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import aiohttp
import click

from mockllama.recordings.catalogue import CatalogueError, load_catalogue, load_setup
from mockllama.recordings.record import (
    DEFAULT_MAX_REPLY_BYTES,
    Outcome,
    RecordError,
    probe,
    record_scenario,
    require_setup,
    write_provenance,
)
from mockllama.recordings.record_sweep import record_sweep, sweep_file, working_folder
from mockllama.wire.scrub import split_credentials
from mockllama.wire.terminal import printable
from mockllama.wire.untrusted_http import url_problem

# A sweep prints its progress at most this often (seconds), and at its end.
PROGRESS_EVERY = 5.0

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


async def sweep(entry, url, out_dir, timeout, headers, max_reply_bytes, auth) -> Outcome:
    """One sweep, with its progress: positions done of all, and the time left at the pace so far."""
    folder = working_folder(out_dir, entry.name)
    click.echo(
        printable(
            f"sweep {entry.name}: asking the server where the reply finishes; every position then goes to "
            f"{folder} as it is recorded (a run stopped midway goes on from there), then into "
            f"{sweep_file(out_dir, entry.name)}"
        )
    )
    started, last, recorded = time.monotonic(), [0.0], [0]

    def progress(done: int, total: int, said: str, afresh: bool) -> None:
        recorded[0] += afresh
        now = time.monotonic()
        if done < total and now - last[0] < PROGRESS_EVERY:
            return
        last[0] = now
        # the pace of the positions this run recorded: those on disk from an earlier run took no time
        left = (now - started) / recorded[0] * (total - done) if recorded[0] else 0.0
        click.echo(printable(f"  {done}/{total} positions, about {left:.0f} s left ({said})"))

    outcome = await record_sweep(entry, url, out_dir, timeout, headers, max_reply_bytes, auth, progress)
    elapsed = time.monotonic() - started
    if outcome.recorded:
        click.echo(
            f"  {outcome.recorded} positions recorded in {elapsed:.0f} s "
            f"({60 * outcome.recorded / max(elapsed, 1e-9):.0f} a minute); "
            f"{outcome.positions - outcome.recorded} were on disk already"
        )
    return Outcome(outcome.scenario, outcome.summary, outcome.failed, outcome.note)


@click.command(epilog=CATALOGUE_HELP)
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

    catalogue = str(catalogue_path or "default")

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
        plain = [entry for entry in entries if entry.sweep is None]
        if plain:
            with click.progressbar(
                length=len(plain), label="recording", item_show_func=lambda text: text and printable(text)
            ) as bar:
                for entry in plain:
                    outcomes.append(await record_scenario(entry, url, out_dir, timeout, headers, max_reply_bytes, auth))
                    bar.update(1, f"{entry.name}: {outcomes[-1].summary}")
        for entry in entries:
            if entry.sweep is not None:
                outcomes.append(await sweep(entry, url, out_dir, timeout, headers, max_reply_bytes, auth))
                # a sweep takes minutes: what is done is in provenance.json should the run stop after it
                write_provenance(out_dir, url, info, outcomes, catalogue, server_command, server_patch, setup=setup)
        for outcome in outcomes:
            click.echo(printable(f"  {outcome.scenario:32} {outcome.summary}"))
        path = write_provenance(out_dir, url, info, outcomes, catalogue, server_command, server_patch, setup=setup)
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
