"""A reply as it is to go out: the blocks, the waits before them, whether the connection is dropped.
Each outgoing step that applies (``server.steps``) changes it in turn; the writer
(``server.writer``) sends what they leave.

Whether the whole reply went out, as the journal says it, is whether the blocks sent are the
reply's own (``whole``): a block left out or shortened is a cut. So a step that changes the
reply's bytes rather than cutting them changes both, through ``rewrite``, the one way to do it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from multidict import CIMultiDict, CIMultiDictProxy

from mockllama.behaviours.reply import Reply


@dataclass(slots=True)
class Outgoing:
    """A reply as it is to go out: each step that applies changes it in turn, then the writer sends it."""

    status: int
    reason: str | None
    headers: CIMultiDictProxy | CIMultiDict
    stream: bool
    blocks: list[bytes]  # a plain body as one block, a stream as its events
    whole: list[bytes]  # the reply's own blocks, all of them: what a cut is measured against
    before: float = 0.0  # seconds to wait before the head
    waits: list[float] | None = None  # seconds to wait before each block, once the head is out
    drop: bool = False  # close the connection after the blocks instead of ending the reply

    @classmethod
    def of(cls, reply: Reply, headers: CIMultiDictProxy | CIMultiDict) -> Outgoing:
        blocks = [event.raw for event in reply.events] if reply.events is not None else [reply.body]
        return cls(reply.status, reply.reason, headers, reply.events is not None, blocks, blocks[:])

    def replace(self, reply: Reply, headers: CIMultiDict) -> None:
        """Send ``reply`` instead, with ``headers``: the waits set so far stay."""
        replaced = Outgoing.of(reply, headers)
        self.status, self.reason, self.headers = replaced.status, replaced.reason, replaced.headers
        self.stream, self.blocks, self.whole = replaced.stream, replaced.blocks, replaced.whole

    def rewrite(self, change: Callable[[bytes], bytes]) -> None:
        """Send every block as ``change`` makes it: the reply's own bytes changed, not cut. What a
        cut is measured against changes with them, so a reply that went out in full is still
        journalled as finished, and one a step before cut, as cut."""
        own = self.whole
        self.whole = [change(block) for block in own]
        self.blocks = [
            self.whole[index] if index < len(own) and block is own[index] else change(block)
            for index, block in enumerate(self.blocks)
        ]

    @property
    def finished(self) -> bool:
        """Whether the whole reply goes out, every block as it is."""
        return self.blocks == self.whole  # the same bytes objects, unless a step cut them

    @property
    def whole_size(self) -> int:
        """The bytes of the whole reply's body."""
        return sum(map(len, self.whole))
