"""How an option is declared: a field of a frozen options dataclass whose metadata says how it is
offered (``option``: its flag, help, parse from text, the pytest plugin's name for it). ``options_of``
reads them back; ``serve``'s click options, the pytest plugin's options and ini keys, the server's
``Settings`` and the docs' options tables are all loops over it. The replay server's options
(``server.options``), each outgoing step's (``server.steps``) and the recording ones
(``upstream.options``) are declared this way.

One validation for every way in: each option's ``parse`` turns the text given (on the command line
or in an ini file) into its value, or raises ``ValueError`` with the reason; the checks that need
more than one option, or the loaded recordings, raise ``OptionError``, which names the option, so
the command line and the plugin each say it in their own spelling.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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
