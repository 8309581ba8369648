"""Record modes, with vcrpy's meanings, and the one place that decides replay, refuse or record.

- ``none``: replay only; a request no recording matches gets the usual 404.
- ``new``:  replay what is recorded; send what is not to the upstream llama-server and record it.
            vcrpy spells it ``new_episodes``, which is accepted too.
- ``all``:  send everything to the upstream and record it again.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from mockllama.wire.errors import RequestError


class RecordMode(str, Enum):
    NONE = "none"
    NEW = "new"
    ALL = "all"


SPELLINGS = {"none": RecordMode.NONE, "new": RecordMode.NEW, "new_episodes": RecordMode.NEW, "all": RecordMode.ALL}


def parse_record_mode(value: str | RecordMode) -> RecordMode:
    """The one validator, for the command line, the pytest plugin and ``create_app``."""
    if isinstance(value, RecordMode):
        return value
    mode = SPELLINGS.get(str(value).strip().lower())
    if mode is None:
        raise ValueError(f"unknown record mode {value!r}; use one of: none, new (or new_episodes), all")
    return mode


def decide(mode: RecordMode, select: Callable[[], object]):
    """The recorded selection to replay, or None to forward the request upstream and record it.

    A match is replayed; a miss under ``none`` raises today's error; a miss under ``new``, and
    every request under ``all``, goes upstream. A miss is whatever the matcher could not answer
    from a recording: no match (404), and also a body it cannot judge (400), whose real reply
    only the upstream knows."""
    if mode is RecordMode.ALL:
        return None
    try:
        return select()
    except RequestError as miss:
        if mode is RecordMode.NEW and miss.status in (400, 404):
            return None
        raise
