"""``stall-between=MS``: MS milliseconds before each stream event after the first."""

from mockllama.server.faults import TIMED_OUT, FaultKind, FaultPlan, SdkOutcome, Seen, register
from mockllama.server.outgoing import Outgoing


@register
class StallBetween(FaultKind):
    name, order, value, seen = "stall-between", 60, "MS", Seen.SILENCE
    help = "wait MS ms before each later stream event"
    wire = "MS milliseconds before each stream event after the first (a plain body: between the headers and the body)"
    measured = {1000: SdkOutcome.raises(TIMED_OUT, requests=3)}

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        pause = value / 1000
        outgoing.waits = [0.0] + [pause] * (len(outgoing.blocks) - 1) if outgoing.stream else [pause]
