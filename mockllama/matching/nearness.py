"""Weighing how far a request is from thousands of recordings, fast: the 404's nearest search.

``differences`` says how two requests differ, field by field, in the client's words; doing that
for every recording of a route is too slow for a 404 among thousands of recordings. The weight
alone is cheaper to get from a *fingerprint*: the compared form (``differences.compared_form``)
cut into parts (each top-level field, each list's length, each message, input item or tool),
every part a tuple holding its JSON. Recordings share most parts (the same system prompt, tools
and settings), and a part costs the same against the sent request wherever it appears, so a 404
prices each distinct part once and a recording's weight is a sum of lookups. The parts are made
when a cassette is read and kept in the cassette index (``fingerprint``, ``pipeline.match_keys``),
equal ones stored as one object: the first 404 at 10,000 recordings at most gathers them (a server
gathers them between requests soon after its start: ``server.warming``). The weight equals the sum
of ``differences(...)``'s weights for every pair of requests (tests/matching/test_nearness.py
checks that); ``differences`` still words the few it lists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any, Generic, TypeVar

from mockllama.matching.fingerprint import FAR, FAR_FIELDS, LIST, field_weight, prompt_weight
from mockllama.matching.pipeline import keys_for
from mockllama.recordings.cassettes import Interaction, reading_order

# A request's parts (``fingerprint.parts_of``): the top-level field names, then each part.
Fingerprint = tuple
Recording = TypeVar("Recording")


class Candidates(list[tuple[Recording, Fingerprint]], Generic[Recording]):
    """``[(recording, fingerprint)]``, with ``parts``: each part of their fingerprints by its id.
    Equal parts are mostly one object (the cassette index stores them so), and a part is priced
    by identity, which costs nothing to hash; ``parts`` keeps each alive, so its id stays its own.
    Made once from all its pairs."""

    def __init__(self, pairs: Iterable[tuple[Recording, Fingerprint]] = ()):
        super().__init__(pairs)
        recorded = list(chain.from_iterable(fingerprint for _, fingerprint in self))  # in one go, not one by one
        self.parts: dict[int, Any] = dict(zip(map(id, recorded), recorded))


class Prices(dict):
    """What each part (by its id) costs against one sent request, priced on first sight."""

    def __init__(self, sent: Fingerprint, parts: dict[int, Any]):
        super().__init__()
        self.names = sent[0]
        self.sent = {
            (kind, slot): (text, dict(keys) if keys is not None else None) for kind, slot, text, keys in sent[1:]
        }
        self.parts = parts

    def __missing__(self, ident: int) -> int:
        part = self.parts[ident]
        if part.__class__ is frozenset:  # the names: the sent fields a recording lacks, each a difference
            missing = self.names - part
            cost = len(missing) + (FAR - 1) * len(missing & FAR_FIELDS) if missing else 0
        else:
            cost = self._price(*part)
        self[ident] = cost
        return cost

    def _price(self, kind: str, slot: tuple, text: str, keys: tuple | None) -> int:
        mine = self.sent.get((kind, slot))
        if kind == "count":  # each sent item beyond the recorded list's end is a difference
            return max(0, int(mine[0]) - int(text)) if mine is not None else 0
        if kind != "item":
            return field_weight(slot[0]) if mine is None else int(mine[0] != text)
        if mine is None:  # beyond the sent list's end: a difference when the sent list is a list
            return int(self._listed(slot[0]))
        if mine[0] == text:
            return 0
        ours = mine[1]
        if ours is None or keys is None:
            return 1
        cost, shared, their_role, content = 0, 0, None, False
        for key, value in keys:  # a loop, not sum(): this runs once per distinct part on a miss
            sent = ours.get(key)  # JSON text is never None
            if sent is not None:
                shared += 1
            if sent != value:
                cost += 1
                content = content or key == "content"
            if key == "role":
                their_role = value
        cost += len(ours) - shared  # and each sent key the recorded item lacks
        if not cost:
            return 1  # the same keys and values, in another order
        if content or ("content" in ours and not any(key == "content" for key, _ in keys)):
            cost += prompt_weight(slot[0], (ours.get("role"), their_role)) - 1
        return cost

    def _listed(self, name: str) -> bool:
        """Whether the sent request has ``name`` as a list, compared item by item."""
        field = self.sent.get(("field", (name,)))
        return field is not None and field[0] == LIST


def fewest(sent: Fingerprint, candidates: list[tuple[Recording, Fingerprint]]) -> tuple[int, list[Recording]]:
    """The least weight of differences (``fingerprint.FAR``), and every candidate at it, in order."""
    if not isinstance(candidates, Candidates):
        candidates = Candidates(candidates)
    price, best, nearest = Prices(sent, candidates.parts).__getitem__, None, []
    for candidate, recorded in candidates:
        found = sum(map(price, map(id, recorded)))
        if best is None or found < best:
            best, nearest = found, [candidate]
        elif found == best:
            nearest.append(candidate)
    return (best if best is not None else 0), nearest


class Fingerprints:
    """Each route's recordings with their fingerprints, as their loader stored them
    (``pipeline.match_keys``), gathered on the route's first miss (or before: ``Matcher.prepare_nearest``)
    and kept."""

    def __init__(self):
        self._routes: dict[tuple, Candidates[Interaction]] = {}

    def clear(self) -> None:
        self._routes.clear()

    def of(self, route: tuple, recordings: Callable[[], Iterable[Interaction]]) -> Candidates[Interaction]:
        """The candidates for ``route``, one per scenario and turn, in reading order (so the 404
        lists equally near ones as ``mockllama scenarios`` does); ``recordings()`` lists the
        route's recordings the first time."""
        found = self._routes.get(route)
        if found is None:
            pairs: list[tuple[Interaction, Fingerprint]] = []
            seen = set()
            for interaction in recordings():
                first = (interaction.scenario, interaction.turn)
                if first not in seen:
                    seen.add(first)
                    parts = keys_for(interaction)[3]
                    assert parts is not None, "the candidates' request bodies are JSON objects"
                    pairs.append((interaction, parts))
            pairs.sort(key=lambda pair: (reading_order(pair[0].scenario, pair[0].limit), pair[0].turn))
            found = self._routes[route] = Candidates(pairs)
        return found
