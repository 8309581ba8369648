"""Sweeps: one request recorded at every token limit from 1 to where its reply finishes.

With greedy decoding the reply cut at N tokens is what the server generates when asked for at most
N, so a sweep shows every position a reply can be cut at, each a real recording. A sweep is one
cassette, ``NAME.sweep.yaml``, holding every position's interactions; it is served as one scenario
a position, ``NAME@N``, reached by a request's own limit as any recording is, or by that name.
This module holds the names; ``cassettes`` splits a sweep's cassette into its positions and
``record_sweep`` records one.
"""

from __future__ import annotations

from pathlib import Path

SWEEP_SUFFIXES = (".sweep.yaml", ".sweep.yml")
# Between a sweep's name and a position: tool-call@17. A catalogue's names never hold it.
POSITION_MARK = "@"


def sweep_of_file(path: Path) -> str | None:
    """The sweep a cassette file records (``tool-call`` for ``tool-call.sweep.yaml``), or None."""
    for suffix in SWEEP_SUFFIXES:
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return path.name[: -len(suffix)]
    return None


def position_name(sweep: str, limit: int) -> str:
    return f"{sweep}{POSITION_MARK}{limit}"


def split_position(name: str) -> tuple[str, int] | None:
    """``("tool-call", 17)`` for ``tool-call@17``; None for a name that names no position."""
    sweep, mark, limit = name.rpartition(POSITION_MARK)
    if not mark or not sweep or not limit.isdigit() or limit != str(int(limit)):
        return None
    return sweep, int(limit)


def runs(values: list[tuple[int, object]]) -> list[tuple[object, int, int]]:
    """Consecutive positions with the same value, as (value, first, last)."""
    found: list[list] = []
    for limit, value in values:
        if found and found[-1][0] == value:
            found[-1][2] = limit
        else:
            found.append([value, limit, limit])
    return [(value, first, last) for value, first, last in found]


def span(first: int, last: int) -> str:
    """``17`` or ``1-36``: positions as the docs and the command line write them."""
    return str(first) if first == last else f"{first}-{last}"
