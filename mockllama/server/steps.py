"""Outgoing steps: what may happen to a reply between its answer and the wire.

A step (a fault, the pacing) says whether it applies to an answer, and, where it does, shapes what
goes out: the blocks, the waits before them, whether the connection is dropped. The steps that
apply are found once per answer, when it is decided (``server.app.Answer``), and kept with it; an
answer that none applies to is sent as it is, a plain body straight from the handler. The writer
(``server.writer``) sends what the steps leave.

A new step is a ``Step`` subclass in its own module, put in ``server.app.outgoing_steps``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from multidict import CIMultiDict, CIMultiDictProxy

from mockllama.behaviours.reply import Reply

if TYPE_CHECKING:
    from mockllama.server.app import Answer


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

    @property
    def finished(self) -> bool:
        """Whether the whole reply goes out, every block as it is."""
        return self.blocks == self.whole  # the same bytes objects, unless a step cut them

    @property
    def whole_size(self) -> int:
        """The bytes of the whole reply's body."""
        return sum(map(len, self.whole))


class Step(ABC):
    """Something that may happen to a reply on its way out."""

    @abstractmethod
    def applies(self, answer: Answer) -> bool:
        """Whether this step changes the replies of ``answer``: asked once, when the answer is decided."""

    @abstractmethod
    def shape(self, answer: Answer, outgoing: Outgoing) -> None:
        """Change ``outgoing``, one reply of ``answer``, as this step does."""
