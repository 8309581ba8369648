"""Reading many cassettes on every core, since each costs CPU (YAML, vcrpy's reading, the checks,
the match keys) and none depends on another.

The workers are forked: they start at once and need nothing imported again. Only where forking is
safe, though: on Linux, from a process with no other thread (a thread holding a lock when the
process forks leaves the lock held in the child for ever). ``forkserver`` and ``spawn`` were
ruled out because their workers run the caller's main script again, which a user's script that
loads recordings at its top level would not survive. Elsewhere, and for a few files, they are
read in the process itself.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Generator
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# Fewer items than this are worked on in this process: the workers would save less than they cost.
PARALLEL_FROM = 8


def workers() -> int:
    """How many processes to read with: the cores this process may run on, where forking is safe; else 1."""
    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return 1
    return len(os.sched_getaffinity(0))


def map_in_order(function: Callable[[Item], Result], items: list[Item]) -> Generator[Result, None, None]:
    """``map(function, items)``, in several processes when the items are many and there is more than
    one core. What ``function`` raises is raised here, at its item, as ``map`` would."""
    count = workers() if len(items) >= PARALLEL_FROM else 1
    if count < 2:
        yield from map(function, items)
        return
    # Imported only to read in several processes: a start from the cassette index never does.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("fork")) as pool:
        yield from pool.map(function, items)
