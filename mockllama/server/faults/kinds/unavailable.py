"""``unavailable=SECONDS``: llama-server's own recorded 503, with ``Retry-After: SECONDS``."""

from mockllama.server.faults import FaultKind, FaultPlan, SdkOutcome, Seen, register, replaced_headers
from mockllama.server.outgoing import Outgoing

UNAVAILABLE = "InternalServerError: Error code: 503"  # the SDK's name for a 503


@register
class Unavailable(FaultKind):
    name, order, value, seen = "unavailable", 80, "SECONDS", Seen.ERROR_STATUS
    help = "llama-server's own recorded 503, with Retry-After: SECONDS"
    wire = "llama-server's own recorded 503, as `status=503` sends it, with a `Retry-After: SECONDS` header"
    measured = {
        1: SdkOutcome.raises(UNAVAILABLE, requests=3),  # retried, a second apart
        300: SdkOutcome.raises(UNAVAILABLE, requests=1),  # past the SDK's two minutes: not retried at all
    }

    def check(self, value: int, plan: FaultPlan) -> None:
        plan.recorded_error(503, f"{self.name}={value}")

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        error = plan.errors[503]
        headers = replaced_headers(outgoing.headers, error)
        headers["Retry-After"] = str(value)
        outgoing.replace(error, headers)
