"""``mockllama scenarios``: the scenarios of a set of recordings, as a table or as JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

import click

from mockllama.behaviours.fixed import verdict
from mockllama.commands.common import chosen, load, options_from
from mockllama.recordings.cassettes import Scenario, in_reading_order
from mockllama.recordings.sweeps import runs, span
from mockllama.server.options import ReplayOptions
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from mockllama.wire.terminal import printable


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
    fixed_status = "-"
    if responses is not None and responses.status == 200:
        fixed_status = "incomplete" if verdict(scenario, responses).cut else "completed"
    twin = scenario.find("POST", CHAT_PATH, False)
    return {
        "name": scenario.name,
        "endpoints": scenario.endpoints,
        "limit": scenario.limit,
        "responses_status": _responses_status(scenario),
        "fixed_status": fixed_status,
        "twin_finish_reason": scenario.twin_finish_reason(responses) if responses and twin else None,
        "turns": scenario.turns,
        "setup": scenario.setup,
        "sweep": scenario.sweep,
        "source": str(scenario.source),
    }


def _changes(values: list):
    """A column over a sweep's positions: each value with the positions it holds for, in order
    (``length 1-36, tool_calls 37``); one value alone when it holds for all, None included, as one
    scenario's row has it."""
    found = runs(values)
    if len(found) == 1:
        return found[0][0]
    return ", ".join(f"{value or '-'} {span(first, last)}" for value, first, last in found)


def sweep_row(rows: list[dict]) -> dict:
    """What `mockllama scenarios` shows of a sweep: one line, its positions' range, and where each
    column changes along it."""
    first, last = rows[0], rows[-1]
    changing = ("responses_status", "fixed_status", "twin_finish_reason")
    return {
        **first,
        "name": f"{first['sweep']}@{first['limit']}-{last['limit']}",
        "limit": f"{first['limit']}-{last['limit']}",
        "positions": len(rows),
        **{column: _changes([(row["limit"], row[column]) for row in rows]) for column in changing},
    }


def one_row_a_sweep(rows: list[dict]) -> list[dict]:
    """The rows with each sweep's positions made one row, where its first position stood."""
    by_sweep: dict[str, list[dict]] = {}
    for row in rows:
        if row["sweep"] is not None:
            by_sweep.setdefault(row["sweep"], []).append(row)
    shown, seen = [], set()
    for row in rows:
        if row["sweep"] is None:
            shown.append(row)
        elif row["sweep"] not in seen:
            seen.add(row["sweep"])
            shown.append(sweep_row(sorted(by_sweep[row["sweep"]], key=lambda r: r["limit"])))
    return shown


def bundled_rows(cassettes: tuple[Path, ...] = (), recordings: str = "stock") -> list[dict]:
    """The rows `mockllama scenarios` shows, in reading order: one per scenario, a sweep as one."""
    return one_row_a_sweep([scenario_row(s) for s in in_reading_order(load(chosen(cassettes, recordings)))])


@click.command()
@options_from(ReplayOptions, "cassettes", "recordings")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per scenario instead of a table.")
def scenarios(cassettes, recordings, as_json) -> None:
    """List the scenarios: turns, limit, recorded Responses status, the chat twin's finish_reason, the
    server set-up recorded from (serve --setup), endpoints.

    A scenario with more than one turn is a conversation: each request is answered with the turn
    its own input asks for (1 + the model replies it already carries). A sweep (the same request
    recorded at every limit up to where it finishes) is one line, NAME@FIRST-LAST: its positions
    are the scenarios NAME@N, and each column says where along them it changes."""
    rows = bundled_rows(cassettes, recordings)
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
