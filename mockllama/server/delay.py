"""``--delay MS``: a fixed wait before every reply's head, the latency of a real server's network
and queue, for a client's timeouts and spinners to be tested against. It adds to ``--pace`` and to
a fault's own waits; an error reply of mockllama's own (a 404, a 400) is sent at once."""

from __future__ import annotations

from mockllama.server.outgoing import Outgoing
from mockllama.server.steps import Answer, Step


class DelayStep(Step):
    """Every replayed reply waits ``milliseconds`` before its head (0: never)."""

    def __init__(self, milliseconds: int):
        self.seconds = milliseconds / 1000

    def applies(self, answer: Answer) -> bool:
        return self.seconds > 0

    def shape(self, answer: Answer, outgoing: Outgoing) -> None:
        outgoing.before += self.seconds
