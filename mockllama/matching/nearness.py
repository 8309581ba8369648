"""Counting how far a request is from thousands of recordings, fast: the 404's nearest search.

``differences`` says how two canonical requests differ, field by field; doing that for every
recording of a route took 60 µs each, 0.6 s for a 404 at 10,000 recordings. The count alone is
cheaper to get from a *fingerprint*: the canonical request cut into parts (each top-level field,
each list's length, each message or tool), every part a tuple holding its JSON. Recordings share
most parts (the same system prompt, tools and settings), and a part costs the same against the
sent request wherever it appears, so a 404 prices each distinct part once and a recording's
count is a sum of lookups. The count equals ``len(differences(...))`` for every pair of
requests (tests/test_nearness.py checks that); ``differences`` still words the few it lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from mockllama.matching.keys import keys_for

# The fields ``differences`` compares item by item, and how it reads each item.
LISTS = {"messages": lambda item: item,
         "tools": lambda tool: tool.get("function", tool) if isinstance(tool, dict) else tool}
# A list field's own part: equal on both sides whenever both are lists (no JSON text is this).
LIST = "<list>"


class Part:
    """One part of a request: a top-level field (``kind`` "field"), a list's length ("count") or
    one of its items ("item"), at ``slot`` (the field's name, or the list's name and the index),
    with its JSON text and, for an item that is an object, each key's JSON text. Hashed by
    identity, which costs nothing: equal parts are made one object (``shared``)."""

    __slots__ = ("kind", "slot", "json", "keys")

    def __init__(self, kind: str, slot: tuple, json_text: str, keys: dict | None = None):
        self.kind, self.slot, self.json, self.keys = kind, slot, json_text, keys


# The top-level field names, then the parts.
Fingerprint = tuple


def _json(value) -> str:
    return json.dumps(value)  # as differences compares: default separators, ASCII


def _parts(canonical: dict):
    for name, value in canonical.items():
        if name in LISTS and isinstance(value, list):
            yield "field", (name,), LIST, None
            yield "count", (name,), str(len(value)), None
            for index, item in enumerate(map(LISTS[name], value)):
                keys = {key: _json(inner) for key, inner in item.items()} if isinstance(item, dict) else None
                yield "item", (name, index), _json(item), keys
        else:
            yield "field", (name,), _json(value), None


def fingerprint(canonical: dict, shared: dict | None = None) -> Fingerprint:
    """A canonical request cut into parts; ``shared`` makes equal parts one object in memory."""
    shared = {} if shared is None else shared
    parts = []
    for kind, slot, text, keys in _parts(canonical):
        part = shared.get((kind, slot, text))
        if part is None:
            part = shared[(kind, slot, text)] = Part(kind, slot, text, keys)
        parts.append(part)
    names = frozenset(canonical)
    return (shared.setdefault(names, names), *parts)


class Prices(dict):
    """What each distinct part costs against one sent request, priced on first sight."""

    def __init__(self, sent: Fingerprint):
        super().__init__()
        self.names = sent[0]
        self.sent = {(part.kind, part.slot): part for part in sent[1:]}

    def __missing__(self, part) -> int:
        if part.__class__ is frozenset:  # the names: the sent fields a recording lacks, one difference each
            cost = len(self.names - part)
        else:
            cost = self._price(part)
        self[part] = cost
        return cost

    def _price(self, part: Part) -> int:
        mine = self.sent.get((part.kind, part.slot))
        if part.kind != "item":
            if part.kind == "count":
                return int(mine is not None and mine.json != part.json)
            return int(mine is None or mine.json != part.json)
        if mine is None or mine.json == part.json:
            return 0  # beyond the sent list's end (its count says so), or the same item
        if mine.keys is None or part.keys is None:
            return 1
        ours, theirs, cost = mine.keys, part.keys, 0
        for key, text in theirs.items():  # a loop, not sum(): this runs once per recording on a miss
            if ours.get(key) != text:  # JSON text is never None
                cost += 1
        for key in ours:
            if key not in theirs:
                cost += 1
        return cost


def fewest(sent: Fingerprint, candidates: Iterable[tuple[object, Fingerprint]]) -> tuple[int, list[object]]:
    """The smallest difference count, and every candidate at it, in order."""
    price, best, nearest = Prices(sent).__getitem__, None, []
    for candidate, recorded in candidates:
        found = sum(map(price, recorded))
        if best is None or found < best:
            best, nearest = found, [candidate]
        elif found == best:
            nearest.append(candidate)
    return (best if best is not None else 0), nearest


class Fingerprints:
    """Each route's recordings with their fingerprints, made on the route's first miss and kept
    (a miss that follows is a scan of lookups); equal parts are stored once."""

    def __init__(self):
        self._shared: dict = {}
        self._routes: dict[tuple, list] = {}

    def clear(self) -> None:
        self._shared.clear()
        self._routes.clear()

    def of(self, route: tuple, recordings: Callable[[], Iterable]) -> list:
        """``[(interaction, fingerprint)]`` for ``route``, one per scenario and turn, in order;
        ``recordings()`` lists the route's candidates the first time."""
        found = self._routes.get(route)
        if found is None:
            found, seen = [], set()
            for interaction in recordings():
                if (interaction.scenario, interaction.turn) not in seen:
                    seen.add((interaction.scenario, interaction.turn))
                    canonical = json.loads(keys_for(interaction)[0])  # the canonical form, as keyed
                    found.append((interaction, fingerprint(canonical, self._shared)))
            self._routes[route] = found
        return found
