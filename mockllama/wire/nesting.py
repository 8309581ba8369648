"""A bound on how deeply a request body may nest, checked before anything walks the body.

Matching walks bodies recursively; a body nested hundreds of levels deep would hit Python's
recursion limit there and turn a 1 KB request into a 500 and a huge traceback. Real requests
(tool schemas included) nest a few dozen levels at most.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from mockllama.wire.errors import RequestError

MAX_JSON_DEPTH = 128


def depth_exceeds(value, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit``, walked without recursion."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children: Iterable[object]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def cannot_nest_deeper(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON text ``raw`` has too few brackets to nest deeper than ``limit``: the common
    case, which needs no parse and no walk."""
    return raw.count(b"[") + raw.count(b"{") <= limit


def refuse_deep_nesting(raw: bytes, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise a 400 for a JSON body nested deeper than ``limit``; anything else passes untouched."""
    if cannot_nest_deeper(raw, limit):
        return
    too_deep = RequestError(
        400,
        f"mockllama: the request body nests JSON more than {limit} levels deep; "
        "no real request does, and mockllama refuses it.",
    )
    try:
        parsed = json.loads(raw)
    except RecursionError:  # deeper than the JSON parser itself will go
        raise too_deep from None
    except ValueError:
        return  # not JSON: matching answers that with its own 400
    if depth_exceeds(parsed, limit):
        raise too_deep
