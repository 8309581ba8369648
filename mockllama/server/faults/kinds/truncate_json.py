"""``truncate-json``: a complete reply whose JSON is cut in half."""

from mockllama.server.faults import FaultKind, FaultPlan, SdkOutcome, Seen, register
from mockllama.server.outgoing import Outgoing


@register
class TruncateJson(FaultKind):
    name, order, value, seen = "truncate-json", 40, None, Seen.BROKEN_JSON
    help = "a complete reply whose JSON is cut in half"
    wire = (
        "a complete HTTP reply whose JSON stops halfway: half the body, or a stream's last event with half its `data`"
    )
    # json.JSONDecodeError, none of the SDK's own exceptions, and not retried
    measured = {None: SdkOutcome.raises("JSONDecodeError: ", requests=1)}

    def apply(self, value: None, outgoing: Outgoing, plan: FaultPlan) -> None:
        if not outgoing.blocks:
            return
        last = outgoing.blocks[-1]
        if not outgoing.stream:
            outgoing.blocks[-1] = last[: len(last) // 2]
            return
        head, marker, data = last.partition(b"data: ")
        data = data.rstrip(b"\n")
        outgoing.blocks[-1] = head + marker + data[: len(data) // 2] + b"\n\n"
