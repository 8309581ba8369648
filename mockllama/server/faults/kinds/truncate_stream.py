"""``truncate-stream=N``: a stream that ends cleanly after N events, without its terminal event."""

from mockllama.server.faults import FaultKind, FaultPlan, SdkOutcome, Seen, register
from mockllama.server.outgoing import Outgoing


@register
class TruncateStream(FaultKind):
    name, order, value, seen = "truncate-stream", 30, "N", Seen.NO_TERMINAL_EVENT
    help = "end the stream cleanly after N events, no terminal event"
    wire = "the stream ends cleanly after N events: a complete HTTP reply with no terminal event"
    measured = {
        # iterating the stream passes it silently; only the stream() helper asks for response.completed
        3: SdkOutcome(
            create="returns, status completed",
            stream="ends silently after 3 events (last response.output_item.added)",
            helper="RuntimeError: Didn't receive a `response.completed` event.",
            requests=1,
        ),
    }

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        del outgoing.blocks[value:]
