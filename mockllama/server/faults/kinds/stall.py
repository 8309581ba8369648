"""``stall=MS``: nothing for MS milliseconds before the first byte."""

from mockllama.server.faults import TIMED_OUT, FaultKind, FaultPlan, SdkOutcome, Seen, register
from mockllama.server.outgoing import Outgoing


@register
class Stall(FaultKind):
    name, order, value, seen = "stall", 50, "MS", Seen.SILENCE
    help = "wait MS ms before the first byte"
    wire = "nothing at all for MS milliseconds, then the reply"
    measured = {1000: SdkOutcome.raises(TIMED_OUT, requests=3)}

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        outgoing.before += value / 1000
