"""An upstream reply's bytes while it is relayed and recorded: in memory while small, past a
threshold in a temporary file, as nginx buffers a proxied reply (``proxy_buffers``, then
``proxy_temp_path``). A large reply is then held once, on disk, however many clients follow it;
it is read back whole only by the thread that writes the recording.

A spool holds its blocks' bytes together (one bytearray, or the file) and one offset a block, so
that what a reply costs is its bytes and ``BLOCK_BYTES`` a block, whatever its framing: a stream of
empty SSE blocks costs what it counts (``Spool.cost``), which the cap and the budget both count.

And the budget that all replies in flight share, so that many concurrent misses cannot between
them hold more than a set number of bytes.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from bisect import bisect_right
from typing import IO

# Bytes of one reply kept in memory; the rest goes to an unnamed temporary file (in TMPDIR).
SPOOL_THRESHOLD = 1024 * 1024
# What each block costs beyond its bytes: its end offset, a 64-bit integer in an array.
BLOCK_BYTES = 8
# Bytes of upstream replies that the recordings in progress may hold between them (spooled or
# not): four replies at record's 64 MiB cap.
DEFAULT_REPLY_BUDGET = 256 * 1024 * 1024
# Blocks handled between two turns of the event loop, where a read is framed into blocks and where
# a run of them goes to a following client: a few milliseconds' work, however tiny the blocks.
BLOCKS_AT_A_TIME = 4096


class Spool:
    """A reply's blocks, in order. ``extend`` from the event loop as they arrive; ``block`` for a
    client following them; ``read`` for the whole, once it is complete."""

    def __init__(self, threshold: int = SPOOL_THRESHOLD):
        self.threshold = threshold
        self.size = 0
        self._ends = array("q")  # where each block ends: no object of its own per block
        self._memory = bytearray()  # the blocks, until they are spooled
        self._file: IO[bytes] | None = None  # the blocks once spooled, and then _memory is empty

    def __len__(self) -> int:
        return len(self._ends)

    @property
    def spooled(self) -> bool:
        return self._file is not None

    @property
    def cost(self) -> int:
        """What the spool holds, as the cap and the budget count it: its bytes and each block's offset."""
        return self.size + BLOCK_BYTES * len(self._ends)

    def extend(self, blocks: list[bytes]) -> None:
        """Add blocks; past the threshold, the whole reply so far moves to the file. OSError if
        the file cannot be written (a full or unwritable TMPDIR)."""
        offset = self.size
        for block in blocks:
            self.size += len(block)
            self._ends.append(self.size)
        if self._file is None and self.size <= self.threshold:
            for block in blocks:
                self._memory += block
            return
        data = b"".join(blocks)
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="mockllama-reply-")
            data, offset, self._memory = bytes(self._memory) + data, 0, bytearray()
        _write_at(self._file.fileno(), data, offset)

    def blocks(self, start: int, stop: int) -> list[bytes]:
        """Blocks ``start`` to ``stop`` (not included), read in one go: what a client following
        the reply has not had yet, however finely the upstream framed it."""
        ends = self._ends
        begin = ends[start - 1] if start else 0
        if self._file is None:
            span = memoryview(self._memory)[begin : ends[stop - 1]]
        else:
            span = memoryview(_read_at(self._file.fileno(), begin, ends[stop - 1] - begin))
        with span:
            starts = [begin, *ends[start : stop - 1]]
            return [bytes(span[a - begin : b - begin]) for a, b in zip(starts, ends[start:stop])]

    def reach(self, start: int, most_bytes: int, most_blocks: int = BLOCKS_AT_A_TIME) -> int:
        """Where a run of blocks from ``start`` ends: every block there is, up to ``most_bytes``
        and ``most_blocks`` (and always one block, whatever its size)."""
        ends = self._ends
        begin = ends[start - 1] if start else 0
        last = min(len(ends), start + most_blocks)
        return max(bisect_right(ends, begin + most_bytes, lo=start, hi=last), start + 1)

    def read(self) -> bytes:
        """The whole reply, one bytes object."""
        if self._file is None:
            return bytes(self._memory)
        return _read_at(self._file.fileno(), 0, self.size)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._memory = bytearray()
        self._ends = array("q")


def _write_at(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def _read_at(fd: int, offset: int, length: int) -> bytes:
    data = os.pread(fd, length, offset)
    if len(data) == length:
        return data
    parts, got = [data], len(data)
    while got < length:
        more = os.pread(fd, length - got, offset + got)
        if not more:
            raise OSError(f"the temporary file ended {length - got} bytes early")
        parts.append(more)
        got += len(more)
    return b"".join(parts)


class ReplyBudget:
    """Bytes of upstream replies held by the recordings in progress, against one limit."""

    def __init__(self, limit: int = DEFAULT_REPLY_BUDGET):
        self.limit = limit
        self.held = 0

    def fits(self, size: int) -> bool:
        return self.held + size <= self.limit

    def take(self, size: int) -> bool:
        """Hold ``size`` more bytes, or refuse (False) when that would pass the limit."""
        if not self.fits(size):
            return False
        self.held += size
        return True

    def give(self, size: int) -> None:
        self.held -= size
