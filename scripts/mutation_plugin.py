"""pytest plugin used by scripts/mutation.sh only: mockllama's memos are forgotten before each test.

mockllama remembers the reply built for each recording (``functools.lru_cache``) and the
selection made for each request body (a byte-bounded memo). Under mutmut one process runs the
suite many times: a reply remembered from an earlier run, or an earlier test, would hide a mutant
from the test that should kill it, and from mutmut's record of which tests call which function.
So every memo made after this plugin loads (it loads before mockllama is imported) is tracked,
and all of them are emptied before each test.
"""

from __future__ import annotations

import functools
import os
import weakref

import pytest

MEMOS: weakref.WeakSet = weakref.WeakSet()
_lru_cache = functools.lru_cache


def _tracked_lru_cache(*args, **kwargs):
    made = _lru_cache(*args, **kwargs)
    if hasattr(made, "cache_clear"):  # used bare, as @lru_cache
        MEMOS.add(made)
        return made

    def decorate(function):
        wrapper = made(function)
        MEMOS.add(wrapper)
        return wrapper

    return decorate


functools.lru_cache = _tracked_lru_cache
functools.cache = lambda function: _tracked_lru_cache(maxsize=None)(function)


def _track_instances(cls) -> None:
    """Any other memo class in mockllama: register each instance as it is made."""
    init = cls.__init__

    def tracked_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        MEMOS.add(self)

    cls.__init__ = tracked_init


try:  # the selection memo, where this version of mockllama has one
    from mockllama.matching.bounded_cache import ByteBoundedMemo
except ImportError:
    pass
else:
    _track_instances(ByteBoundedMemo)


@pytest.hookimpl(tryfirst=True)  # before mutmut's own teardown hook files the test's calls
def pytest_runtest_teardown(item, nextitem):
    """mutmut's first pass: count the calls made in a test's child processes as the test's own.

    mutation_hits/sitecustomize.py writes them to the file MUTATION_HITS (set by mutation.sh)."""
    hits_file = os.environ.get("MUTATION_HITS")
    if not hits_file or os.environ.get("MUTANT_UNDER_TEST") != "stats":
        return
    taken = f"{hits_file}.taken"
    try:
        os.replace(hits_file, taken)  # a child still running writes to a new file, read after the next test
    except FileNotFoundError:
        return
    with open(taken, encoding="utf-8") as hits:
        names = {line.strip() for line in hits if line.strip()}
    os.remove(taken)
    from mutmut.state import state

    state()._stats.update(names)


@pytest.fixture(autouse=True)
def _forget_mockllama_memos():
    for memo in list(MEMOS):
        memo.cache_clear()
