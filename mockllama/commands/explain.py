"""``mockllama explain``: what a scenario teaches, or what a running mockllama's journal holds."""

from __future__ import annotations

import sys

import click

from mockllama.commands.common import chosen, load, options_from
from mockllama.server.options import ReplayOptions
from mockllama.teaching.explain import Unexplained, explained_or_raise, journal_lines, render, stories
from mockllama.teaching.journal_client import JournalUnreadable, fetch_journal
from mockllama.teaching.sweep import render_sweep, sweep_asked, sweep_story, sweeps_in
from mockllama.wire.scrub import scrub_text
from mockllama.wire.terminal import printable


@click.command()
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

    A sweep (named NAME, or any of its positions NAME@N) is one table, a row a position: the
    output so far, whether a call's arguments parse, and each behaviour's status.

    Without SCENARIO, every scenario, each sweep once. Colour only when stdout is a terminal. With --journal URL,
    what a client sent instead: the last requests that server answered, how, and their bodies.
    """
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

    scenarios = load(chosen(cassettes, recordings))
    sweeps = sweeps_in(scenarios)
    if scenario is not None and scenario not in scenarios and scenario not in sweeps:
        known = [name for name, s in scenarios.items() if s.sweep is None]
        known += [f"{name} (or {name}@N, N {p[0].limit}-{p[-1].limit})" for name, p in sweeps.items()]
        click.echo(
            printable(f"mockllama explain: no scenario named {scenario!r}; known: {', '.join(sorted(known))}"), err=True
        )
        sys.exit(2)
    asked = sweep_asked(scenario, scenarios) if scenario is not None else None
    if asked is not None:  # a sweep, named or one of its positions: one table, that position marked
        name, marked = asked
        for line in render_sweep(sweep_story(name, sweeps[name]), marked):
            click.echo(line)
        return
    try:
        told = [explained_or_raise(scenarios[scenario])] if scenario else stories(scenarios)
    except Unexplained as err:
        click.echo(printable(f"mockllama explain: {err}"), err=True)
        sys.exit(2)
    for one in told:
        for line in render_sweep(one) if one["kind"] == "sweep" else render(one):
            click.echo(line)
