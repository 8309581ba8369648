"""The behaviours, each declared once: a name, a line that says what it sends, the reply it makes of
a recording, and the step it may add per request. Each behaviour's own module registers it;
everything that lists behaviours (the path prefixes, the ``X-Mockllama-Behaviour`` header's
values, ``serve --behaviour``, the URLs ``serve`` prints, the teaching page, the pytest plugin's
``mockllama_base_url``, the docs) iterates ``BEHAVIOURS``.

A new behaviour is one module in this package that calls ``register``: the package imports every
module in it (``mockllama/behaviours/__init__.py``), so nothing else needs to name it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockllama.behaviours.reply import Reply
    from mockllama.recordings.cassettes import Interaction, Scenario

DEFAULT_BEHAVIOUR = "buggy"  # a faithful llama-server
# Listed first, in this order; any other behaviour follows in the order it was registered.
FIRST = ("buggy", "fixed", "spec")
# A name is a path segment (/NAME/v1/...) and a header value: lower case, no spaces.
NAME = re.compile(r"[a-z][a-z0-9-]{0,39}")


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: replies are cached per behaviour
class Behaviour:
    name: str
    description: str  # one line, for `serve --help` and the docs' list; Markdown backticks allowed
    reply: Callable[[Interaction, Scenario], Reply]  # pure: built once per recording, then cached
    # What it does to the cached reply for each request (spec's response objects echo what was sent)
    per_request: Callable[[Reply, Interaction, bytes], Reply] | None = None

    @property
    def plain_description(self) -> str:
        """The description for a terminal: without Markdown's backticks."""
        return self.description.replace("`", "")


# name -> behaviour, in listing order; changed in place only, so every importer sees each one
BEHAVIOURS: dict[str, Behaviour] = {}


def _listing_order(name: str) -> int:
    return FIRST.index(name) if name in FIRST else len(FIRST)


def register(behaviour: Behaviour) -> Behaviour:
    """Add ``behaviour`` to every list of behaviours; a second one of the same name is an error."""
    if not NAME.fullmatch(behaviour.name):
        raise ValueError(
            f"a behaviour's name is a path segment: lower case letters, digits and '-', not {behaviour.name!r}"
        )
    if behaviour.name in BEHAVIOURS:
        raise ValueError(f"a behaviour named {behaviour.name!r} is registered already")
    ordered = sorted([*BEHAVIOURS.values(), behaviour], key=lambda b: _listing_order(b.name))  # stable
    BEHAVIOURS.clear()
    BEHAVIOURS.update((b.name, b) for b in ordered)
    return behaviour


def unregister(name: str) -> None:
    """Remove a behaviour (for tests that register one for a while)."""
    del BEHAVIOURS[name]


def unknown_behaviour(name: str) -> str:
    """The one message for a behaviour nobody registered."""
    return f"unknown behaviour {name!r}; use one of: {', '.join(BEHAVIOURS)}"


def markdown_list(names: Iterable[str] | None = None) -> str:
    """The behaviours (those ``names``, else every one) as the docs list them (README.md,
    docs/behaviours.md)."""
    items = list(BEHAVIOURS.values()) if names is None else [BEHAVIOURS[name] for name in names]
    return "\n".join(
        f"- **{b.name}**: {b.description}{'.' if index == len(items) - 1 else ';'}" for index, b in enumerate(items)
    )
