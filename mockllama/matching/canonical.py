"""The canonical form of a request: the chat request llama-server generates from, every equivalence applied.

llama-server turns a ``/v1/responses`` request into a chat request before it generates, so two
requests that become the same chat request get the same generation. The canonical form is that
chat request (through :func:`chat_twin`, the one conversion the recorder also uses), with every
rule of ``equivalences`` applied: the rules proven on ``/v1/messages`` to an Anthropic request, and
those proven on every route to a request compared as sent (any other route, and a Responses request
whose input items do not convert). Anything no rule covers is kept as sent, so a difference that
has not been proven harmless is a miss.

Each form's code is made once, from the rules, when this module is imported: a request pays for
the rules that read its fields, never for reading the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, overload

from mockllama.matching.equivalences import RULES
from mockllama.matching.rules import CHAT, EVERY, MESSAGES, Equivalence, LeftOut, Renamed, Rewritten, holds_on
from mockllama.recordings.chat_twin import chat_twin
from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH, RESPONSES_PATH

Form = Callable[[dict], dict]


class Forms(NamedTuple):
    """The canonical form of a request body, by how it is read."""

    chat: Form  # a chat request, and a Responses request's chat twin
    messages: Form  # an Anthropic /v1/messages request
    as_sent: Form  # anything else


def forms_of(rules: Iterable[Equivalence]) -> Forms:
    """The forms ``rules`` make (tests make them of fewer rules)."""
    rules = tuple(rules)
    return Forms(*(_form([rule for rule in rules if holds_on(rule, on)]) for on in (CHAT, MESSAGES, EVERY)))


def _identity(value):
    return value


def _chained(rewrites: list[Callable]) -> Callable:
    """One function that applies ``rewrites`` in order."""
    if not rewrites:
        return _identity
    if len(rewrites) == 1:
        return rewrites[0]
    first, rest = rewrites[0], _chained(rewrites[1:])
    return lambda value: rest(first(value))


@dataclass
class _Place:
    """The rewrites at one place of the request, and at the places inside it."""

    rewrites: list[Callable] = field(default_factory=list)
    keys: dict[str, _Place] = field(default_factory=dict)
    items: _Place | None = None

    def add(self, path: str, rewrite: Callable) -> None:
        place = self
        for step in path.split("."):
            place = place.keys.setdefault(step.removesuffix("[]"), _Place())
            if step.endswith("[]"):
                place.items = place.items or _Place()
                place = place.items
        place.rewrites.append(rewrite)

    def compiled(self) -> Callable:
        """One function that applies every rewrite at this place, then those inside it."""
        rewrite = _chained(self.rewrites)
        if self.keys:
            rewrite = _in_object(rewrite, tuple((key, place.compiled()) for key, place in self.keys.items()))
        if self.items is not None:
            rewrite = _in_list(rewrite, self.items.compiled())
        return rewrite


def _in_object(rewrite: Callable, keys: tuple) -> Callable:
    """``rewrite``, then each key's own rewrite inside an object (a message's content, say)."""

    def in_object(value):
        new = rewrite(value)
        if isinstance(new, dict):
            if new is value:  # the rewrites made no new object: change a copy, never the request
                new = dict(new)
            for key, inner in keys:
                if key in new:
                    new[key] = inner(new[key])
        return new

    return in_object


def _in_list(rewrite: Callable, items: Callable) -> Callable:
    """``rewrite``, then ``items`` on each item of a list (each message, say)."""
    if rewrite is _identity:
        return lambda value: [items(item) for item in value] if isinstance(value, list) else value

    def in_list(value):
        new = rewrite(value)
        return [items(item) for item in new] if isinstance(new, list) else new

    return in_list


def _is_one_of(value, values: tuple) -> bool:
    """``value`` is among ``values`` as JSON compares: true is not 1, and 0 is 0.0."""
    for expected in values:  # a loop, not any(): this runs for every defaulted field of a request
        if expected is None or expected.__class__ is bool:
            if value is expected:
                return True
        elif value.__class__ is not bool and value == expected:
            return True
    return False


def _left_out(ways: tuple, value, body: dict) -> bool:
    """Whether a field sent with ``value`` is left out of ``body`` in one of its ``ways``."""
    for values, when in ways:
        if (values is None or _is_one_of(value, values)) and (when is None or when(body)):
            return True
    return False


_LEFT_OUT = ("left out",)  # a field left out whatever its value and the request


def _form(rules: list[Equivalence]) -> Form:
    """The canonical form under ``rules``: their tables made here, once. A field no rule reads costs
    one lookup."""
    ways: dict[str, list[tuple]] = {}  # field -> [(values or None for any, condition or None)]
    renamed: dict[str, str] = {}
    places = _Place()
    for rule in rules:
        if isinstance(rule, LeftOut):
            for name, values in rule.fields.items():
                ways.setdefault(name, []).append((values, rule.when))
        elif isinstance(rule, Renamed):
            renamed.update(rule.names)
        elif isinstance(rule, Rewritten):
            for path in rule.at:
                places.add(path, rule.rewrite)
    whole = _chained(places.keys.pop("", _Place()).rewrites)
    each_value = _chained(places.keys.pop("*", _Place()).rewrites)
    rewrites = {name: place.compiled() for name, place in places.keys.items()}
    # Each field a rule reads: _LEFT_OUT, or (its ways of being left out, the name it is renamed to,
    # its rewrite under that name, its rewrite under its own).
    read: dict[str, tuple] = {}
    for name in {*ways, *renamed, *rewrites}:
        found = tuple(ways.get(name, ()))
        if (None, None) in found:
            read[name] = _LEFT_OUT
        else:
            to = renamed.get(name)
            read[name] = (found or None, to, rewrites.get(to) if to else None, rewrites.get(name))

    def canonical(body: dict) -> dict:
        form = {}
        for key, value in body.items():
            rule = read.get(key)
            if rule is not None:
                if rule is _LEFT_OUT:
                    continue
                left_out, to, renamed_rewrite, rewrite = rule
                if left_out is not None and _left_out(left_out, value, body):
                    continue
                if to is not None and to not in body:
                    key, rewrite = to, renamed_rewrite
                if rewrite is not None:
                    value = rewrite(value)
            form[key] = each_value(value)
        return whole(form)

    return canonical


FORMS = forms_of(RULES)


@overload
def canonical_request(path: str, body: dict, forms: Forms = ...) -> dict: ...
@overload
def canonical_request(path: str, body: object, forms: Forms = ...) -> object: ...
def canonical_request(path: str, body: object, forms: Forms = FORMS) -> object:
    """What llama-server generates from, for a request body sent to ``path``."""
    if not isinstance(body, dict):
        return body
    if path == RESPONSES_PATH:
        try:
            return forms.chat(chat_twin(body))
        except (KeyError, TypeError, AttributeError):  # malformed input items: compare as sent
            return forms.as_sent(body)
    if path == CHAT_PATH:
        return forms.chat(body)
    if path == MESSAGES_PATH:
        return forms.messages(body)
    return forms.as_sent(body)
