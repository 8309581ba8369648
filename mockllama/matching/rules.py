"""What an equivalence of matching is: its kinds, its live cases, and its row of the docs table.

An equivalence is a rule object (``equivalences.RULES`` lists them) of one of four kinds, by where
its code sits: ``Converted`` (llama-server's own Responses-to-chat conversion makes the requests
one, so the rule has no code), ``LeftOut`` (a field sent with some values is the field left out),
``Renamed`` (another name for a field) and ``Rewritten`` (a function applied at a place of the
chat request). ``canonical`` makes each form's code from the rules once; the docs table and the
live tier's cases are made from them too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH, RESPONSES_PATH

CHAT, MESSAGES, EVERY = "chat", "messages", "every route"
ROUTES = {CHAT: (RESPONSES_PATH, CHAT_PATH), MESSAGES: (MESSAGES_PATH,)}  # EVERY: any
ANY = None  # a LeftOut field left out whatever its value


class Case(NamedTuple):
    """Two forms of one request, sent to ``path``."""

    name: str
    path: str
    first: Any
    second: Any


def _no_cases() -> Sequence[Case]:
    return ()


@dataclass(frozen=True, kw_only=True)
class Equivalence:
    """One equivalence. ``matches`` and ``because`` are its docs row (markdown): which requests
    match, and what llama-server does that makes them generate the same. ``cases`` makes its live
    cases, ``unlike`` the pairs it must keep apart (made on demand: some read the catalogue)."""

    matches: str
    because: str
    cases: Callable[[], Sequence[Case]]
    unlike: Callable[[], Sequence[Case]] = _no_cases
    on: tuple[str, ...] = (CHAT,)

    def described(self) -> str:
        """``matches`` as the docs row shows it."""
        return self.matches


@dataclass(frozen=True, kw_only=True)
class Converted(Equivalence):
    """Made one by llama-server's own Responses-to-chat conversion, which canonical applies first to
    every Responses request (``recordings.chat_twin``, the conversion the recorder uses too): the
    rule has no code of its own."""


@dataclass(frozen=True, kw_only=True)
class LeftOut(Equivalence):
    """Each of ``fields``, sent with one of its values (``ANY``: any value), is the field left out;
    with ``when``, only in a request for which ``when(request)`` holds. ``matches`` may name the
    fields as ``{fields}``."""

    fields: Mapping[str, tuple | None]
    when: Callable[[dict], bool] | None = None

    def described(self) -> str:
        listed = []
        for name, values in self.fields.items():
            shown = "" if values is ANY else " " + " or ".join(_json(value) for value in values)
            listed.append(f"`{name}`{shown}")
        return self.matches.format(fields=", ".join(listed))


@dataclass(frozen=True, kw_only=True)
class Renamed(Equivalence):
    """Each field of ``names`` is the field it names, unless the request sends that one too."""

    names: Mapping[str, str]


@dataclass(frozen=True, kw_only=True)
class Rewritten(Equivalence):
    """``rewrite`` is applied at each place of ``at``, in the chat request: ``"messages[]"`` is each
    message, ``"messages[].content"`` each message's content, ``"tools[]"`` each tool, ``"*"`` each
    top-level value, ``""`` the whole request once its fields are in. It gets any JSON value there
    and returns it unchanged or a new one, never changing its argument (which may be the client's
    request), but at ``""``, whose argument is canonical's own new object. Rules at one place apply
    in the order of ``RULES``."""

    at: tuple[str, ...]
    rewrite: Callable[[Any], Any]


def _json(value) -> str:
    return "null" if value is None else f"`{json.dumps(value)}`"


def holds_on(rule: Equivalence, form: str) -> bool:
    """Whether ``rule`` applies in the canonical form of ``form``: CHAT, MESSAGES, or EVERY (as sent)."""
    return form in rule.on or EVERY in rule.on


_ON_WORDS = {CHAT: "Responses, chat", MESSAGES: "`/v1/messages`", EVERY: "every route"}


def _named(cases: Sequence[Case]) -> str:
    """The cases' names, those that share a label (``never read: ...``) as one entry with their count."""
    labels = [case.name.split(": ")[0] if ": " in case.name else None for case in cases]
    shown: list[str] = []
    for case, label in zip(cases, labels):
        count = labels.count(label) if label is not None else 1
        if count < 3:
            shown.append(f"`{case.name}`")
        elif f"`{label}: ...`" not in " ".join(shown):
            shown.append(f"`{label}: ...` ({count} cases)")
    return ", ".join(shown)


def rules_table(rules: Iterable[Equivalence]) -> str:
    """The table of docs/matching.md: which requests match, where, why, and the live cases."""
    rows = ["| these match | on | because | live evidence (test cases) |", "| --- | --- | --- | --- |"]
    for rule in rules:
        evidence = _named(rule.cases())
        apart = rule.unlike()
        if apart:
            evidence += "; kept apart: " + _named(apart)
        where = ", ".join(_ON_WORDS[on] for on in rule.on)
        rows.append(f"| {rule.described()} | {where} | {rule.because} | {evidence} |")
    return "\n".join(rows)
