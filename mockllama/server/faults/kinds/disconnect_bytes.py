"""``disconnect-bytes=N``: the connection dropped after N body bytes."""

from mockllama.server.faults import CONNECTION_ERROR, FaultKind, FaultPlan, SdkOutcome, Seen, register
from mockllama.server.outgoing import Outgoing


@register
class DisconnectBytes(FaultKind):
    name, order, value, seen = "disconnect-bytes", 20, "N", Seen.DROPPED
    help = "drop the connection after N body bytes"
    wire = (
        "the connection is dropped after N body bytes; a plain body keeps its full `Content-Length`, "
        "so the client can tell it is short"
    )
    measured = {100: SdkOutcome.raises(CONNECTION_ERROR, requests=3)}

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        kept, left = [], value
        for block in outgoing.blocks:
            if left <= 0:
                break
            kept.append(block[:left])
            left -= len(kept[-1])
        outgoing.drop = value < outgoing.whole_size
        outgoing.blocks = kept
