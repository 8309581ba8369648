"""``--delay MS``: a fixed wait before every reply's head, the latency of a real server's network
and queue, for a client's timeouts and spinners to be tested against. It adds to ``--pace`` and to
a fault's own waits; an error reply of mockllama's own (a 404, a 400) is sent at once."""

from __future__ import annotations

from dataclasses import dataclass, field

from mockllama.server.faults import MAX_VALUE
from mockllama.server.option_fields import option, whole
from mockllama.server.outgoing import Outgoing
from mockllama.server.steps.registry import register
from mockllama.server.steps.step import Answer, Step


@dataclass(frozen=True)
class DelayOptions:
    delay: int = field(
        default=0,
        metadata=option(
            "--delay",
            "Wait MS milliseconds before every replayed reply, as a real server's latency would, on top of "
            "--pace and any fault. 0: no waiting.",
            metavar="MS",
            parse=whole(0, MAX_VALUE),
        ),
    )


@register
class DelayStep(Step):
    """Every replayed reply waits ``milliseconds`` before its head (0: never). First: the wait is
    the server's, before whatever a fault or the pacing adds."""

    place = 10
    options = DelayOptions

    def __init__(self, milliseconds: int):
        self.seconds = milliseconds / 1000

    @classmethod
    def of(cls, settings, faults) -> DelayStep:
        return cls(settings.delay)

    def applies(self, answer: Answer) -> bool:
        return self.seconds > 0

    def shape(self, answer: Answer, outgoing: Outgoing) -> None:
        outgoing.before += self.seconds
