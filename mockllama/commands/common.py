"""What several commands share: click options made from the declared ones, and the recordings a
command loads, or a one-line message naming the file and the reason."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mockllama.matching.pipeline import match_keys
from mockllama.recordings.cassettes import RECORDING_SETS, CassetteError, Scenario, load_scenarios
from mockllama.server.option_fields import Option, options_of
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
        typed: dict[str, Any] = {"type": (str,) * declared.nargs, "metavar": declared.metavar}
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


def chosen(cassettes: tuple[Path, ...], recordings: str) -> list[Path]:
    """--cassettes, or else the bundled recordings --recordings names."""
    if cassettes and recordings != "stock":
        raise click.UsageError(f"--recordings {recordings} and --cassettes both choose the recordings: use one.")
    return list(cassettes) or [RECORDING_SETS[recordings]()]


def load(directories: list[Path]) -> dict[str, Scenario]:
    """Load cassettes or stop with a message that names the file and the reason (exit 2)."""
    if not directories:
        return {}
    try:
        return load_scenarios(directories, keys_of=match_keys)
    except CassetteError as err:
        click.echo(f"mockllama: {printable(err)}", err=True)
        sys.exit(2)
