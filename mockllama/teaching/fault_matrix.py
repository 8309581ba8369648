"""The fault matrix: what the official ``openai`` SDK does, sync and async, under each fault.

    python -m mockllama.teaching.fault_matrix                    print the table
    python -m mockllama.teaching.fault_matrix --write docs/faults.md  replace the table between that page's markers

The faults are those of the registry (``server.faults.KINDS``), each with the values it names to
be measured with and what it declares the SDK does under each (``server.faults.SdkOutcome``), which
``unexpected`` compares a fresh row with. Every fault is applied to the ``text-finishes`` scenario in
the ``spec`` behaviour: a reply that really finished, in the wire format the SDK's stream helper
reads, so that whatever goes wrong is the fault's doing. Needs the ``openai`` package
(``pip install "mockllama[test]"``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import click

from mockllama.recordings.cassettes import Scenario, bundled_cassette_dir, load_scenarios
from mockllama.server.app import create_replay_app
from mockllama.server.background import BackgroundServer
from mockllama.server.faults import FAULT_HEADER, KINDS, FaultPlan, Seen, parse_fault
from mockllama.server.journal import JOURNAL
from mockllama.teaching.matrix import print_or_write
from mockllama.teaching.matrix import replace_table as _replace_between
from mockllama.teaching.matrix import table_in as _between

BEGIN, END = "<!-- faults:begin -->", "<!-- faults:end -->"
SCENARIO, BEHAVIOUR = "text-finishes", "spec"
TERMINAL = {"response.completed", "response.incomplete", "response.failed"}
STALL_TIMEOUT = 0.5  # the client timeout (seconds) for the faults seen as silence, shorter than the stall
STALL_SECONDS = 1.5  # longer than the stalls measured (1000 ms), so that the server has finished
COLUMNS = (
    "fault",
    "`create`",
    "`create(stream=True)` iteration",
    "`stream()` helper",
    "async",
    "requests seen with `max_retries=2`",
)


def faults_measured(scenarios: dict[str, Scenario]) -> list[str]:
    """Every registered fault, with the values it is measured with."""
    plan = FaultPlan.build(scenarios)
    return [str(fault) for kind in KINDS.values() for fault in kind.examples(plan)]


def is_silent(fault: str) -> bool:
    """Whether a client sees ``fault`` as silence: it is measured with a short client timeout."""
    return parse_fault(fault).kind.seen is Seen.SILENCE


@dataclass(frozen=True)
class Row:
    fault: str
    create: str
    stream: str
    helper: str
    async_create: str
    async_stream: str
    async_helper: str
    requests_with_retries: int

    @property
    def async_same(self) -> bool:
        return (self.create, self.stream, self.helper) == (self.async_create, self.async_stream, self.async_helper)


def unexpected(row: Row) -> list[str]:
    """Where ``row`` differs from what its fault's kind declares the SDK does (``SdkOutcome``): one
    line a cell, none when the SDK did as declared."""
    fault = parse_fault(row.fault)
    expected = fault.kind.outcome(fault.value)
    found = [
        f"{column}: {cell!r} does not begin {begins!r}"
        for column, cell, begins in (
            ("create", row.create, expected.create),
            ("create(stream=True)", row.stream, expected.stream),
            ("stream()", row.helper, expected.helper),
        )
        if not cell.startswith(begins)
    ]
    if row.requests_with_retries != expected.requests:
        found.append(f"requests with max_retries=2: {row.requests_with_retries}, not {expected.requests}")
    return found


def _failure(err: BaseException) -> str:
    message = " ".join(str(err).split())
    message = message if len(message) <= 60 else message[:59] + "…"
    return f"{type(err).__name__}: {message}"


def _returned(response) -> str:
    return f"returns, status {response.status}"


def _iterated(types: list[str]) -> str:
    if types and types[-1] in TERMINAL:
        return f"ends with {types[-1]}"
    last = types[-1] if types else "none"
    return f"ends silently after {len(types)} events (last {last})"


def _helped(final) -> str:
    return f"final response, status {final.status}"


REQUEST = {"model": SCENARIO, "input": "anything"}


def measure_sync(client) -> tuple[str, str, str]:
    outcomes: list[str] = []
    for attempt in (
        lambda: _returned(client.responses.create(**REQUEST)),
        lambda: _iterated([e.type for e in client.responses.create(**REQUEST, stream=True)]),
        lambda: _helped(_helper_sync(client)),
    ):
        try:
            outcomes.append(attempt())
        except Exception as err:  # the outcome being measured, whatever it is
            outcomes.append(_failure(err))
    created, iterated, helped = outcomes
    return created, iterated, helped


def _helper_sync(client):
    with client.responses.stream(**REQUEST) as stream:
        return stream.get_final_response()


async def measure_async(client) -> tuple[str, str, str]:
    async def create():
        return _returned(await client.responses.create(**REQUEST))

    async def iterate():
        return _iterated([e.type async for e in await client.responses.create(**REQUEST, stream=True)])

    async def helper():
        async with client.responses.stream(**REQUEST) as stream:
            return _helped(await stream.get_final_response())

    outcomes: list[str] = []
    for attempt in (create, iterate, helper):
        try:
            outcomes.append(await attempt())
        except Exception as err:  # the outcome being measured, whatever it is
            outcomes.append(_failure(err))
    created, iterated, helped = outcomes
    return created, iterated, helped


class _ClientSettings(TypedDict):
    """What both openai clients are made with: typed, as openai's constructors require."""

    base_url: str
    api_key: str
    max_retries: int
    timeout: float
    default_headers: dict[str, str]


def _clients(base_url: str, fault: str, max_retries: int):
    import openai

    timeout = STALL_TIMEOUT if is_silent(fault) else 30.0
    settings: _ClientSettings = {
        "base_url": base_url,
        "api_key": "unused",
        "max_retries": max_retries,
        "timeout": timeout,
        "default_headers": {FAULT_HEADER: fault},
    }
    return openai.OpenAI(**settings), openai.AsyncOpenAI(**settings)


def _settle(fault: str) -> None:
    """The server journals a request when it has finished it: after the stall, long after the client left."""
    if is_silent(fault):
        time.sleep(STALL_SECONDS)


def measure(server: BackgroundServer, fault: str) -> Row:
    sync_client, async_client = _clients(server.base_url(BEHAVIOUR), fault, max_retries=0)
    sync = measure_sync(sync_client)

    async def run_async() -> tuple[str, str, str]:
        async with async_client:
            return await measure_async(async_client)

    asynchronous = asyncio.run(run_async())
    _settle(fault)
    journal = server.app[JOURNAL]
    before = journal.last_id
    retrying, _ = _clients(server.base_url(BEHAVIOUR), fault, max_retries=2)
    try:
        retrying.responses.create(**REQUEST)
    except Exception:  # only the number of requests is measured here
        pass
    _settle(fault)
    return Row(fault, *sync, *asynchronous, requests_with_retries=len(journal.entries(since=before)))


def run(scenarios: dict[str, Scenario] | None = None) -> list[Row]:
    scenarios = scenarios or load_scenarios([bundled_cassette_dir()])
    with BackgroundServer(create_replay_app(scenarios)) as server:
        return [measure(server, fault) for fault in faults_measured(scenarios)]


def render(rows: list[Row]) -> str:
    import openai

    silent = " and ".join(f"`{kind.name}`" for kind in KINDS.values() if kind.seen is Seen.SILENCE)
    lines = [
        f"Generated by `python -m mockllama.teaching.fault_matrix --write docs/faults.md` "
        f"with openai {openai.__version__}, "
        f"on `{SCENARIO}` in `{BEHAVIOUR}`; {silent} with a client `timeout={STALL_TIMEOUT}`.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + " --- |" * len(COLUMNS),
    ]
    for row in rows:
        differs = "same" if row.async_same else f"{row.async_create}; {row.async_stream}; {row.async_helper}"
        cells = [f"`{row.fault}`", row.create, row.stream, row.helper, differs, str(row.requests_with_retries)]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def table_in(document: str) -> str:
    return _between(document, BEGIN, END)


def replace_table(document: str, table: str) -> str:
    """The matrix ``table`` written into ``document`` (docs/faults.md), between its markers."""
    return _replace_between(document, table, BEGIN, END)


@click.command()
@click.option(
    "--write",
    "write_to",
    type=click.Path(path_type=Path, exists=True),
    help="Replace the table between the fault matrix's markers in this file (docs/faults.md).",
)
def main(write_to: Path | None) -> None:
    """Run the openai SDK, sync and async, under every fault, and print the table."""
    print_or_write("fault matrix", lambda: render(run()), replace_table, write_to)


if __name__ == "__main__":
    sys.exit(main())
