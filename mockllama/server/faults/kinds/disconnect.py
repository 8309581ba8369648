"""``disconnect=N``: the connection dropped after N stream events."""

from mockllama.server.faults import CONNECTION_ERROR, FaultKind, FaultPlan, SdkOutcome, Seen, register
from mockllama.server.outgoing import Outgoing


@register
class Disconnect(FaultKind):
    name, order, value, seen = "disconnect", 10, "N", Seen.DROPPED
    help = "drop the connection after N stream events"
    wire = (
        "the connection is dropped after N stream events: no terminal event, no end of the chunked body. "
        "A plain body counts as one event, so `disconnect=0` drops it after the headers"
    )
    measured = {
        # a plain body is one event: three of them leave it whole
        3: SdkOutcome("returns, status completed", CONNECTION_ERROR, CONNECTION_ERROR, requests=1),
        0: SdkOutcome.raises(CONNECTION_ERROR, requests=3),
    }

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        outgoing.drop = value < len(outgoing.blocks)
        del outgoing.blocks[value:]
