"""``status=CODE``: llama-server's own recorded error reply for HTTP CODE, instead of the reply."""

from mockllama.server.faults import Fault, FaultKind, FaultPlan, SdkOutcome, Seen, register, replaced_headers
from mockllama.server.outgoing import Outgoing

# The openai SDK's exception for each status (openai._client's _make_status_error); any other
# 5xx is an InternalServerError, any other status an APIStatusError.
SDK_ERRORS = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
}
SDK_RETRIES = {408, 409, 429}  # and every 5xx (openai._base_client's _should_retry)


@register
class Status(FaultKind):
    name, order, value, seen = "status", 70, "CODE", Seen.ERROR_STATUS
    help = "llama-server's own recorded error reply for CODE"
    wire = "llama-server's own error reply for CODE, exactly as recorded, instead of the reply"

    def check(self, value: int, plan: FaultPlan) -> None:
        plan.recorded_error(value, f"{self.name}={value}")

    def examples(self, plan: FaultPlan) -> list[Fault]:
        """Every status recorded: the SDK is measured under each."""
        return [Fault(self, code) for code in sorted(plan.errors)]

    def outcome(self, value: int) -> SdkOutcome:
        error = SDK_ERRORS.get(value, "InternalServerError" if value >= 500 else "APIStatusError")
        retried = value >= 500 or value in SDK_RETRIES
        return SdkOutcome.raises(f"{error}: Error code: {value}", requests=3 if retried else 1)

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        error = plan.errors[value]
        outgoing.replace(error, replaced_headers(outgoing.headers, error))
