"""A request in its compared form cut into parts, as plain values: what the 404's nearest search compares.

The compared form is the canonical request in its client's words (``words``). Each top-level field
is a part, and each list ``differences`` compares item by item (the messages or input items, the
tools) gives a part for its length and one for each item. A part is ``(kind, slot, JSON text,
keys)``: ``kind`` is "field", "count" or "item", ``slot`` the field's name (and the item's index),
and ``keys``, for an item that is an object, each key with its value's JSON text. The parts of a
recording are computed when its cassette is read and kept in the cassette index with its match
keys, so that the first 404 at 10,000 recordings need not compute them (``nearness`` weighs with
them, by the weights declared here).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

# The fields ``differences`` compares item by item, and how it reads each item: a chat request's
# messages and tools, a Responses request's input items (``words.client_form``).
LISTS = {
    "messages": lambda item: item,
    "input": lambda item: item,
    "tools": lambda tool: tool.get("function", tool) if isinstance(tool, dict) else tool,
}
# How far a difference takes a request from a recording. Another prompt (a user message's content),
# or tools on one side only, is another request: it weighs more than any number of the others (a
# limit, a setting, the system turn, a tool's schema, a prefill), so the 404's nearest recordings
# are those with the client's own prompt and kind of request.
FAR = 1000
# The lists whose items are conversation turns, where a user's content is the prompt.
TURNS = frozenset({"messages", "input"})
PROMPT_ROLE_TEXT = '"user"'  # the role "user", as JSON text
FAR_FIELDS = frozenset({"tools"})  # present on one side only


def field_weight(name: str) -> int:
    """What a top-level field sent or recorded on one side only weighs."""
    return FAR if name in FAR_FIELDS else 1


def prompt_weight(listed: str, role_texts) -> int:
    """What a differing ``content`` of an item of the list ``listed`` weighs: FAR for a user's
    message (another prompt), else 1. ``role_texts``: the item's role on each side, as JSON text
    (None where it has none)."""
    return FAR if listed in TURNS and PROMPT_ROLE_TEXT in role_texts else 1


def key_weight(listed: str, key: str, role_texts) -> int:
    """What a differing key of an item of the list ``listed`` weighs."""
    return prompt_weight(listed, role_texts) if key == "content" else 1


# A list field's own part: equal on both sides whenever both are lists (no JSON text is this).
LIST = "<list>"

Part = tuple  # (kind, slot, JSON text, keys)


_encode = json.JSONEncoder().encode  # as differences compares: default separators, ASCII
# What the encoder writes for these types, without the encoder it makes for each value that is not
# a string (most of a fingerprint's values: each field's own, each message's role and content).
_SCALAR_TEXT: dict[type, Callable[[Any], str]] = {
    str: json.encoder.encode_basestring_ascii,
    int: int.__repr__,
    bool: {True: "true", False: "false"}.__getitem__,
    type(None): lambda _: "null",
}


def _json(value) -> str:
    text = _SCALAR_TEXT.get(value.__class__)
    return text(value) if text is not None else _encode(value)


def _item(item) -> tuple[str, tuple | None]:
    """An item's JSON text, and for an object each key with its value's JSON text. The object's
    text is put together from its keys' (what ``json.dumps`` writes, given string keys): a tool's
    schema or a long message is encoded once, not twice."""
    if not isinstance(item, dict):
        return _json(item), None
    keys = tuple((key, _json(inner)) for key, inner in item.items())
    if not all(key.__class__ is str for key in item):  # json.dumps would write these keys its own way
        return _json(item), keys
    return "{" + ", ".join(f"{_json(key)}: {text}" for key, text in keys) + "}", keys


def parts_of(canonical: dict) -> tuple:
    """``(the top-level field names, as a frozenset, then each part)``."""
    parts: list = [frozenset(canonical)]
    for name, value in canonical.items():
        if name in LISTS and isinstance(value, list):
            parts.append(("field", (name,), LIST, None))
            parts.append(("count", (name,), str(len(value)), None))
            for index, item in enumerate(map(LISTS[name], value)):
                parts.append(("item", (name, index), *_item(item)))
        else:
            parts.append(("field", (name,), _json(value), None))
    return tuple(parts)
