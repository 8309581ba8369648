"""Outgoing steps: what may happen to a reply between its answer and the wire.

A step (a fault, the pacing) says whether it applies to an answer, and, where it does, shapes what
goes out: the blocks, the waits before them, whether the connection is dropped. The steps that
apply are found once per answer, when it is decided (``Answer``, here, as each step reads it), and
kept with it; an answer that none applies to is sent as it is, a plain body straight from the
handler. What goes out is an ``Outgoing`` (``server.outgoing``); the writer (``server.writer``)
sends what the steps leave.

A new step is a ``Step`` subclass in its own module, put in ``server.app.outgoing_steps``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from multidict import CIMultiDictProxy

from mockllama.behaviours.reply import Reply
from mockllama.recordings.cassettes import Interaction, Scenario
from mockllama.server.outgoing import Outgoing

if TYPE_CHECKING:
    from mockllama.server.faults import Fault


class Step(ABC):
    """Something that may happen to a reply on its way out."""

    @abstractmethod
    def applies(self, answer: Answer) -> bool:
        """Whether this step changes the replies of ``answer``: asked once, when the answer is decided."""

    @abstractmethod
    def shape(self, answer: Answer, outgoing: Outgoing) -> None:
        """Change ``outgoing``, one reply of ``answer``, as this step does."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a request is answered with: the behaviour's reply to a recorded interaction, its head,
    the fault asked for, if any, and the outgoing steps that apply. Everything in it follows from
    the request alone."""

    interaction: Interaction
    scenario: Scenario
    reply: Reply
    headers: CIMultiDictProxy  # shared by every reply of this selection, never changed
    turn: int
    fault: Fault | None
    steps: tuple[Step, ...] = ()  # the outgoing steps that apply to it, in order
    whole: bool = False  # a plain body that no step applies to: sent at once, from the handler

    def with_steps(self, steps: tuple[Step, ...]) -> Answer:
        """This answer with those of ``steps`` that apply to it: asked once, here, not per request."""
        applying = tuple(step for step in steps if step.applies(self))
        return replace(self, steps=applying, whole=not applying and self.reply.events is None)
