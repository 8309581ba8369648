"""A least-recently-used memo bounded by the bytes of its keys, not by how many it holds.

The selection memo is keyed by request bodies. A count bound lets a few thousand large distinct
bodies pin hundreds of megabytes; a byte bound keeps the memory known whatever clients send.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
ENTRY_OVERHEAD = 256  # the tuple, the dict slot and the cached value, roughly, per entry


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    currsize: int
    bytes: int
    max_bytes: int


class ByteBoundedMemo:
    """Memoises ``function(*args)``; ``size(args)`` says how many bytes an entry's key holds.

    Exceptions are not remembered, as with ``functools.lru_cache``. Not thread-safe: the server
    calls it from its one event loop thread."""

    def __init__(self, function: Callable, size: Callable[[tuple], int], max_bytes: int = DEFAULT_MAX_BYTES):
        self._function = function
        self._size = size
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self._bytes = 0
        self._hits = 0
        self._misses = 0

    def __call__(self, *args):
        found = self._entries.get(args)
        if found is not None:
            self._entries.move_to_end(args)
            self._hits += 1
            return found[0]
        self._misses += 1
        value = self._function(*args)
        cost = self._size(args) + ENTRY_OVERHEAD
        if cost <= self.max_bytes:
            self._entries[args] = (value, cost)
            self._bytes += cost
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted
        return value

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self._hits, self._misses, len(self._entries), self._bytes, self.max_bytes)

    def cache_clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
