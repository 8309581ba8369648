"""How a request differs from a recording, in canonical terms: the no-match 404's content.

Named matchers, each ``(sent, recorded) -> list[Difference]`` over two canonical requests (see
``canonical``). They run only on a miss: a hit is one exact lookup of the canonical key.
Fields are named as on the endpoint the client used (a Responses request's ``max_tokens`` is
its ``max_output_tokens``), nested ones like ``messages[1].content``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from mockllama.matching.canonical import canonical_request
from mockllama.matching.fingerprint import parts_of
from mockllama.matching.nearness import Fingerprint, fewest
from mockllama.recordings.cassettes import Interaction
from mockllama.wire.routes import RESPONSES_PATH

ABSENT = ...
# The canonical (chat) name of a field -> the name a Responses client sent it under.
RESPONSES_NAMES = {"max_tokens": "max_output_tokens"}


@dataclass(frozen=True)
class Difference:
    field: str
    sent: object
    recorded: object
    note: str = ""

    def __str__(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return f"{self.field}: sent {_short(self.sent)}, recorded {_short(self.recorded)}{note}"


def _short(value) -> str:
    text = "absent" if value is ABSENT else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _same(a, b) -> bool:
    """Canonical forms are equal when their JSON is: key order counts where canonical kept it."""
    return a is b or (a is not ABSENT and b is not ABSENT and json.dumps(a) == json.dumps(b))


def _items(field: str, sent, recorded) -> list[Difference]:
    """Two lists compared item by item, each item's keys by name."""
    if not isinstance(sent, list) or not isinstance(recorded, list):
        return [] if _same(sent, recorded) else [Difference(field, sent, recorded)]
    found = []
    if len(sent) != len(recorded):
        found.append(Difference(f"{field} (count)", len(sent), len(recorded)))
    for index, (mine, theirs) in enumerate(zip(sent, recorded)):
        if _same(mine, theirs):
            continue
        if isinstance(mine, dict) and isinstance(theirs, dict):
            for key in sorted(mine.keys() | theirs.keys()):
                if not _same(mine.get(key, ABSENT), theirs.get(key, ABSENT)):
                    found.append(
                        _with_order_note(f"{field}[{index}].{key}", mine.get(key, ABSENT), theirs.get(key, ABSENT))
                    )
        else:
            found.append(Difference(f"{field}[{index}]", mine, theirs))
    return found


def _order(a, b) -> bool:
    """Equal as JSON values, but written in another key order somewhere inside."""
    return a == b and json.dumps(a) != json.dumps(b)


def _with_order_note(field: str, sent, recorded) -> Difference:
    if _order(sent, recorded):
        return Difference(
            field,
            sent,
            recorded,
            "the same keys in another order: llama-server renders a tool "
            "schema in the order sent, and generates something else",
        )
    return Difference(field, sent, recorded)


def messages(sent: dict, recorded: dict) -> list[Difference]:
    return _items("messages", sent.get("messages", ABSENT), recorded.get("messages", ABSENT))


def tools(sent: dict, recorded: dict) -> list[Difference]:
    mine, theirs = sent.get("tools", ABSENT), recorded.get("tools", ABSENT)
    if isinstance(mine, list) and isinstance(theirs, list):
        flat = [
            [tool.get("function", tool) if isinstance(tool, dict) else tool for tool in side] for side in (mine, theirs)
        ]
        return _items("tools", *flat)
    return [] if _same(mine, theirs) else [Difference("tools", mine, theirs)]


def other_fields(sent: dict, recorded: dict) -> list[Difference]:
    """Every other field: limits, sampling, tool_choice, stream, and anything not proven harmless."""
    return [
        Difference(key, sent.get(key, ABSENT), recorded.get(key, ABSENT))
        for key in sorted(sent.keys() | recorded.keys())
        if key not in ("messages", "tools") and not _same(sent.get(key, ABSENT), recorded.get(key, ABSENT))
    ]


MATCHERS = {"messages": messages, "tools": tools, "fields": other_fields}


def differences(path: str, sent, recorded) -> list[Difference]:
    return _differences(path, canonical_request(path, sent), recorded)


def _differences(path: str, mine, recorded) -> list[Difference]:
    """``differences`` with the sent request already in canonical form (a 404 compares it with
    every recording of the route: thousands, in a large directory)."""
    theirs = canonical_request(path, recorded)
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        return [] if _same(mine, theirs) else [Difference("body", mine, theirs)]
    found = [difference for matcher in MATCHERS.values() for difference in matcher(mine, theirs)]
    if path == RESPONSES_PATH:
        found = [_renamed(difference) for difference in found]
    return found


def _renamed(difference: Difference) -> Difference:
    name = RESPONSES_NAMES.get(difference.field)
    return difference if name is None else Difference(name, difference.sent, difference.recorded, difference.note)


def nearest(
    path: str,
    body,
    candidates: list[tuple[Interaction, Fingerprint]],
    listed: int,
) -> tuple[int, int, list[tuple[Interaction, list[Difference]]]]:
    """The fewest differences any candidate has, how many candidates have that few, and the first
    ``listed`` of them with their differences. Candidates come fingerprinted (``nearness``)."""
    mine = canonical_request(path, body)
    count, closest = fewest(parts_of(mine), candidates)
    return count, len(closest), [(i, _differences(path, mine, i.request_json)) for i in closest[:listed]]


def describe(found: list[Difference]) -> str:
    return ", ".join(str(difference) for difference in found) or "nothing (another stream flag or route)"
