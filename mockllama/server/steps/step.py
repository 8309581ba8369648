"""The outgoing step: what a step declares (the options that turn it on, its place in the order,
whether a plain body keeps the fast path) and what it does, and the ``Answer`` it reads.

A step says whether it applies to an answer, and, where it does, shapes what goes out: the blocks,
the waits before them, whether the connection is dropped. The steps that apply are found once per
answer, when it is decided, and kept with it; a plain body that none applies to, or only steps that
keep the fast path, is sent at once, straight from the handler. What goes out is an ``Outgoing``
(``server.outgoing``); the writer (``server.writer``) sends what the steps leave.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from multidict import CIMultiDict, CIMultiDictProxy

from mockllama.behaviours.reply import Reply
from mockllama.recordings.cassettes import Interaction, Scenario
from mockllama.server.outgoing import Outgoing

if TYPE_CHECKING:
    from mockllama.server.faults import Fault, FaultPlan


class Step(ABC):
    """Something that may happen to a reply on its way out. Its module declares it, as class
    attributes, and registers it (``server.steps.registry.register``):

    - ``place``: where it runs among the steps, from the lowest place up; no two share one.
    - ``options``: a frozen dataclass of ``option(...)`` fields (``server.option_fields``), the
      options that turn it on, or None. ``ReplayOptions`` is made of every step's, so `serve`,
      the pytest plugin, the server's ``Settings`` and the docs' tables offer them.
    - ``keeps_fast_path``: whether a plain body it applies to can still go out at once from the
      handler. Then its ``shape`` runs once per answer, not per request, so it must do the same
      every time and neither wait, nor drop the connection, nor cut the reply.

    Bytes are changed through ``Outgoing.rewrite``, which keeps what the journal measures a cut
    against in step; a block edited in place is a cut (a fault's)."""

    place: ClassVar[int]
    options: ClassVar[type | None] = None
    keeps_fast_path: ClassVar[bool] = False

    @classmethod
    def of(cls, settings: Any, faults: FaultPlan) -> Step:
        """The step as the server with ``settings`` runs it (its options are attributes of
        ``settings``), made once per app; ``faults`` is the app's fault plan. ``settings`` is the
        server's ``Settings``, typed Any here: its fields are assembled from the steps, so the steps
        come before it and cannot name it."""
        return cls()

    @abstractmethod
    def applies(self, answer: Answer) -> bool:
        """Whether this step changes the replies of ``answer``: asked once, when the answer is decided."""

    @abstractmethod
    def shape(self, answer: Answer, outgoing: Outgoing) -> None:
        """Change ``outgoing``, one reply of ``answer``, as this step does."""


class FastPathBroken(TypeError):
    """A step that declares ``keeps_fast_path`` waited, dropped the connection or cut the reply."""


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
    whole: bool = False  # a plain body, as the steps left it: sent at once, from the handler

    def with_steps(self, steps: tuple[Step, ...]) -> Answer:
        """This answer with those of ``steps`` that apply to it: asked once, here, not per request.
        A plain body that only steps keeping the fast path apply to is shaped by them here, once."""
        applying = tuple(step for step in steps if step.applies(self))
        if self.reply.events is not None or not all(step.keeps_fast_path for step in applying):
            return replace(self, steps=applying)
        return self._shaped(applying) if applying else replace(self, whole=True)

    def _shaped(self, applying: tuple[Step, ...]) -> Answer:
        outgoing = Outgoing.of(self.reply, self.headers)
        for step in applying:
            step.shape(self, outgoing)
        if outgoing.before or outgoing.waits is not None or outgoing.drop or not outgoing.finished:
            names = ", ".join(type(step).__name__ for step in applying)
            raise FastPathBroken(
                f"{names}: a step that keeps the fast path may change a reply's head and bytes "
                "(Outgoing.rewrite), not wait, drop the connection or cut it; say keeps_fast_path = False"
            )
        body = b"".join(outgoing.blocks)
        reply = replace(self.reply, status=outgoing.status, reason=outgoing.reason or self.reply.reason, body=body)
        headers: Any = outgoing.headers
        if not isinstance(headers, CIMultiDictProxy):
            headers = CIMultiDictProxy(CIMultiDict(headers))
        return replace(self, reply=reply, headers=headers, steps=applying, whole=True)
