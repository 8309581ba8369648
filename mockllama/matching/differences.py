"""How a request differs from a recording, in the client's own words: the no-match 404's content.

Named matchers, each ``(sent, recorded) -> list[Difference]`` over two requests in the form the
client wrote them (``words.client_form``: the canonical form, with a Responses request's
``instructions``, ``input`` items and ``max_output_tokens`` as it sent them). They run only on a
miss: a hit is one exact lookup of the canonical key. Each difference has a weight
(``fingerprint.FAR`` for another prompt or tools on one side only, else 1), and a difference
inside a value (a tool's schema) names the places inside it that differ, like
``tools[0].parameters.properties.path.title``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from mockllama.matching.canonical import canonical_request
from mockllama.matching.fingerprint import FAR, field_weight, key_weight, parts_of
from mockllama.matching.nearness import Fingerprint, fewest
from mockllama.matching.words import client_form, client_name
from mockllama.recordings.cassettes import Interaction

ABSENT = ...
# How many of the places inside one differing value the 404 names.
SHOWN_PLACES = 3
ORDER = "the same keys in another order"
TOOL_ORDER = ORDER + ": llama-server renders a tool schema in the order sent, and generates something else"


@dataclass(frozen=True)
class Difference:
    field: str
    sent: object
    recorded: object
    note: str = ""
    weight: int = 1
    places: tuple = ()  # (path, sent, recorded, note) inside the value, where both are objects

    def __str__(self) -> str:
        if len(self.places) == 1:
            return _place(*self.places[0])
        if self.places:
            shown = [_place(path[len(self.field) :].lstrip("."), *rest) for path, *rest in self.places[:SHOWN_PLACES]]
            if len(self.places) > SHOWN_PLACES:
                shown.append(f"and {len(self.places) - SHOWN_PLACES} more")
            return f"{self.field}, in {len(self.places)} places ({'; '.join(shown)})"
        return _place(self.field, self.sent, self.recorded, self.note)

    def named(self, name) -> Difference:
        """The difference with its field and places renamed by ``name(field)``."""
        places = tuple((name(path), *rest) for path, *rest in self.places)
        return Difference(name(self.field), self.sent, self.recorded, self.note, self.weight, places)


def _place(path: str, sent, recorded, note: str) -> str:
    return f"{path}: {_change(sent, recorded, note)}"


def _change(sent, recorded, note: str) -> str:
    note = f" ({note})" if note else ""
    return f"sent {_short(sent)}, recorded {_short(recorded)}{note}"


def _short(value) -> str:
    text = "absent" if value is ABSENT else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _same(a, b) -> bool:
    """Compared forms are equal when their JSON is: key order counts where canonical kept it."""
    return a is b or (a is not ABSENT and b is not ABSENT and json.dumps(a) == json.dumps(b))


def _order_note(path: str) -> str:
    return TOOL_ORDER if path.startswith("tools") else ORDER


def _places(path: str, sent, recorded) -> list[tuple]:
    """The deepest places where two values differ, each ``(path, sent, recorded, note)``."""
    if isinstance(sent, dict) and isinstance(recorded, dict):
        found = []
        for key in [*sent, *(key for key in recorded if key not in sent)]:
            mine, theirs = sent.get(key, ABSENT), recorded.get(key, ABSENT)
            if not _same(mine, theirs):
                found += _places(f"{path}.{key}", mine, theirs)
        return found or [(path, sent, recorded, _order_note(path))]  # equal but for the order of its keys
    if isinstance(sent, list) and isinstance(recorded, list) and len(sent) == len(recorded):
        return [
            place
            for index, (mine, theirs) in enumerate(zip(sent, recorded))
            if not _same(mine, theirs)
            for place in _places(f"{path}[{index}]", mine, theirs)
        ]
    return [(path, sent, recorded, "")]


def _valued(field: str, sent, recorded, weight: int = 1) -> Difference:
    """A difference of one value; where both sides are objects (or lists as long), with the places inside."""
    nested = (isinstance(sent, dict) and isinstance(recorded, dict)) or (
        isinstance(sent, list) and isinstance(recorded, list) and len(sent) == len(recorded)
    )
    places = tuple(_places(field, sent, recorded)) if nested else ()
    return Difference(field, sent, recorded, weight=weight, places=places)


def _role_text(item: dict):
    return json.dumps(item["role"]) if "role" in item else None


def _items(field: str, sent, recorded) -> list[Difference]:
    """Two lists compared item by item, each item's keys by name."""
    if not isinstance(sent, list) or not isinstance(recorded, list):
        return [] if _same(sent, recorded) else [Difference(field, sent, recorded)]
    found = [  # an item on one side only: a prefill, a system message, an earlier turn
        Difference(
            f"{field}[{index}]",
            sent[index] if index < len(sent) else ABSENT,
            recorded[index] if index < len(recorded) else ABSENT,
        )
        for index in range(min(len(sent), len(recorded)), max(len(sent), len(recorded)))
    ]
    for index, (mine, theirs) in enumerate(zip(sent, recorded)):
        if _same(mine, theirs):
            continue
        if not (isinstance(mine, dict) and isinstance(theirs, dict)):
            found.append(Difference(f"{field}[{index}]", mine, theirs))
            continue
        roles = (_role_text(mine), _role_text(theirs))
        keyed = [
            _valued(
                f"{field}[{index}].{key}", mine.get(key, ABSENT), theirs.get(key, ABSENT), key_weight(field, key, roles)
            )
            for key in sorted(mine.keys() | theirs.keys())
            if not _same(mine.get(key, ABSENT), theirs.get(key, ABSENT))
        ]
        path = f"{field}[{index}]"
        found += keyed or [Difference(path, mine, theirs, _order_note(path))]  # the same keys, in another order
    return found


def turns(sent: dict, recorded: dict) -> list[Difference]:
    """The conversation: a chat or Anthropic request's messages, a Responses request's input items."""
    listed = "input" if "input" in sent or "input" in recorded else "messages"
    return _items(listed, sent.get(listed, ABSENT), recorded.get(listed, ABSENT))


def tools(sent: dict, recorded: dict) -> list[Difference]:
    mine, theirs = sent.get("tools", ABSENT), recorded.get("tools", ABSENT)
    if isinstance(mine, list) and isinstance(theirs, list):
        flat = [
            [tool.get("function", tool) if isinstance(tool, dict) else tool for tool in side] for side in (mine, theirs)
        ]
        return _items("tools", *flat)
    if _same(mine, theirs):
        return []
    return [Difference("tools", mine, theirs, weight=field_weight("tools") if ABSENT in (mine, theirs) else 1)]


def other_fields(sent: dict, recorded: dict) -> list[Difference]:
    """Every other field: limits, sampling, tool_choice, stream, and anything not proven harmless."""
    return [
        _valued(
            key,
            sent.get(key, ABSENT),
            recorded.get(key, ABSENT),
            field_weight(key) if key not in sent or key not in recorded else 1,
        )
        for key in sorted(sent.keys() | recorded.keys())
        if key not in ("messages", "input", "tools") and not _same(sent.get(key, ABSENT), recorded.get(key, ABSENT))
    ]


MATCHERS = {"turns": turns, "tools": tools, "fields": other_fields}


def compared_form(path: str, body):
    """What a 404 compares of a request: its canonical form in its client's words."""
    return client_form(path, body, canonical_request(path, body))


def differences(path: str, sent, recorded) -> list[Difference]:
    return _differences(path, sent, compared_form(path, sent), recorded)


def _differences(path: str, body, mine, recorded) -> list[Difference]:
    """``differences`` with the sent request already in compared form (a 404 compares it with
    every recording of the route: thousands, in a large directory)."""
    theirs = compared_form(path, recorded)
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        return [] if _same(mine, theirs) else [Difference("body", mine, theirs)]
    found = [difference for matcher in MATCHERS.values() for difference in matcher(mine, theirs)]
    return [difference.named(lambda field: client_name(path, body, field)) for difference in found]


def weight(found: list[Difference]) -> int:
    return sum(difference.weight for difference in found)


def count_of(weighed: int) -> int:
    """How many differences a weight of them is (no request differs in ``FAR`` small ones)."""
    return weighed // FAR + weighed % FAR


def nearest(
    path: str,
    body,
    candidates: list[tuple[Interaction, Fingerprint]],
    listed: int,
) -> tuple[int, int, list[tuple[Interaction, list[Difference]]]]:
    """The least weight of differences any candidate has, how many candidates have that little,
    and the first ``listed`` of them with their differences. Candidates come fingerprinted (``nearness``)."""
    mine = compared_form(path, body)
    least, closest = fewest(parts_of(mine), candidates)
    return least, len(closest), [(i, _differences(path, body, mine, i.request_json)) for i in closest[:listed]]


def describe(found: list[Difference]) -> str:
    return ", ".join(str(difference) for difference in found) or "nothing (another stream flag or route)"
