"""Faults that real servers have, applied to one reply on its way out.

A fault belongs to a request, not to a recording: it is chosen per request (the
``X-Mockllama-Fault`` header, echoed in the reply) or per scenario (``serve --fault SCENARIO
FAULT``), and applied by ``FaultStep`` (``server.fault_step``), one of the outgoing steps, to what goes
out, never to the cached reply a behaviour built.

Each kind of fault is one class in the last section of this module, registered in ``KINDS``: its
name, what its value is and how it is checked, its help, what it does to the reply going out, and
what a client sees. ``serve --help``, the table in docs/faults.md and the fault matrix
(``teaching.fault_matrix``) are made from ``KINDS``.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy, istr

from mockllama.behaviours.reply import Reply, recorded_reply
from mockllama.recordings.cassettes import Interaction, Scenario
from mockllama.server.outgoing import Outgoing
from mockllama.wire.errors import RequestError
from mockllama.wire.headers import HOP_BY_HOP

FAULT_HEADER = istr("X-Mockllama-Fault")  # istr: looked up on every request (server.app says why)
EVERY_SCENARIO = "*"
# ASCII digits only (str.isdigit also takes "²" and "٣"), and few enough of them for any wait: a
# stall of 400 digits made asyncio.sleep raise OverflowError. 999999999 ms is over eleven days.
WHOLE_NUMBER = re.compile(r"[0-9]{1,9}")
MAX_VALUE = 999_999_999


class Seen(enum.Enum):
    """What a client sees of a fault."""

    DROPPED = "the connection drops before the reply is whole"
    NO_TERMINAL_EVENT = "a complete HTTP reply: a stream without its terminal event"
    BROKEN_JSON = "a complete HTTP reply whose JSON does not parse"
    SILENCE = "nothing for a while: a client with a shorter timeout gives up"
    ERROR_STATUS = "an HTTP error status, in llama-server's error shape"


class FaultKind:
    """One kind of fault. A subclass sets the class attributes, implements ``apply``, and is
    registered with ``@register``; its value is a whole number (``N``, ``MS``, ``CODE``, ...) or none."""

    name: ClassVar[str]
    value: ClassVar[str | None] = None  # what its value is, as help writes it; None: it takes none
    help: ClassVar[str]  # one line, for serve --help
    wire: ClassVar[str]  # what goes out on the wire, for the table in docs/faults.md
    seen: ClassVar[Seen]
    measured: ClassVar[tuple[str, ...]] = ()  # the values the fault matrix measures it with

    @property
    def usage(self) -> str:
        return self.name if self.value is None else f"{self.name}={self.value}"

    def parse(self, value: str | None, text: str) -> int | None:
        """The value written after ``=`` (None: no ``=``), as a number; ``text`` is the whole fault."""
        if self.value is None:
            if value is not None:
                raise ValueError(f"the fault {self.name} takes no value (got {text!r})")
            return None
        if value is None or not WHOLE_NUMBER.fullmatch(value):
            raise ValueError(
                f"the fault {self.name} needs a whole number: {self.usage}, {self.value} from 0 to {MAX_VALUE} "
                f"(got {text!r})"
            )
        return int(value)

    # ``value`` is what ``parse`` gave: an int for a kind that takes one, else None. Typed Any, so each
    # kind's own methods can say which of the two it gets.
    def check(self, value: Any, plan: FaultPlan) -> None:
        """Raise ValueError if this server cannot send the fault (a reply nobody recorded)."""

    def examples(self, plan: FaultPlan) -> list[Fault]:
        """The faults the fault matrix measures for this kind."""
        return [Fault(self, None if value == "" else int(value)) for value in self.measured or ("",)]

    def apply(self, value: Any, outgoing: Outgoing, plan: FaultPlan) -> None:
        raise NotImplementedError


KINDS: dict[str, FaultKind] = {}  # by name, in the order help and docs list them


def register(kind: type[FaultKind]) -> type[FaultKind]:
    if kind.name in KINDS:
        raise ValueError(f"a fault named {kind.name!r} is registered already")
    KINDS[kind.name] = kind()
    return kind


def usage() -> str:
    return ", ".join(kind.usage for kind in KINDS.values())


def help_lines() -> list[str]:
    """One line a fault, its usage and its help, for ``serve --help``."""
    width = max(len(kind.usage) for kind in KINDS.values()) + 2
    return [f"{kind.usage:<{width}}{kind.help}" for kind in KINDS.values()]


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    value: int | None = None

    @property
    def name(self) -> str:
        return self.kind.name

    def __str__(self) -> str:
        return self.name if self.value is None else f"{self.name}={self.value}"


def parse_fault(text: str) -> Fault:
    """``"disconnect=3"`` -> the disconnect fault with 3; a ValueError that lists the faults otherwise."""
    name, has_value, value = text.strip().partition("=")
    kind = KINDS.get(name.strip().lower())
    if kind is None:
        raise ValueError(f"unknown fault {text.strip()!r}; use one of: {usage()}")
    return Fault(kind, kind.parse(value.strip() if has_value else None, text.strip()))


def recorded_errors(scenarios: dict[str, Scenario]) -> dict[int, Interaction]:
    """Each error status llama-server was recorded answering, with its first recorded reply.

    The ``server-errors`` scenario (recorded for this purpose) comes first, then the others by name."""
    ordered = sorted(scenarios.values(), key=lambda s: (s.name != "server-errors", s.name))
    found: dict[int, Interaction] = {}
    for scenario in ordered:
        for interaction in scenario.interactions:
            if interaction.status >= 400 and interaction.status not in found:
                found[interaction.status] = interaction
    return found


@dataclass(frozen=True)
class FaultPlan:
    """The faults set per scenario, and the recorded error replies the faults can send."""

    by_scenario: dict[str, Fault]
    errors: dict[int, Reply]  # built once here, so a faulted request sends one as it is

    @classmethod
    def build(cls, scenarios: dict[str, Scenario], by_scenario: dict[str, str] | None = None) -> FaultPlan:
        """Check every fault now, so that a bad ``--fault`` stops start-up, not a request."""
        plan = cls({}, {code: recorded_reply(error) for code, error in recorded_errors(scenarios).items()})
        for scenario, text in (by_scenario or {}).items():
            if scenario != EVERY_SCENARIO and scenario not in scenarios:
                raise ValueError(f"no loaded scenario is named {scenario!r}; known: {', '.join(sorted(scenarios))}")
            plan.by_scenario[scenario] = plan.check(parse_fault(text))
        return plan

    def check(self, fault: Fault) -> Fault:
        fault.kind.check(fault.value, self)
        return fault

    def choose(self, header: str | None, scenario: str) -> Fault | None:
        """The request's ``X-Mockllama-Fault`` header, else the scenario's fault, else none."""
        if header is not None:
            try:
                return self.check(parse_fault(header))
            except ValueError as err:
                raise RequestError(400, f"mockllama: bad {FAULT_HEADER}: {err}") from None
        return self.by_scenario.get(scenario) or self.by_scenario.get(EVERY_SCENARIO)

    def recorded_error(self, code: int | None, fault: str) -> Reply:
        """llama-server's own recorded reply for HTTP ``code``; a ValueError naming what there is, else."""
        if code not in self.errors:
            recorded = ", ".join(str(each) for each in sorted(self.errors)) or "none"
            raise ValueError(
                f"no recording of llama-server answering HTTP {code}, so {fault} has no body "
                f"to send (recorded: {recorded}). Record one with `mockllama record` and serve it with --cassettes."
            )
        return self.errors[code]


FAULT_PLAN = web.AppKey("fault_plan", FaultPlan)


def apply_fault(fault: Fault, outgoing: Outgoing, plan: FaultPlan) -> None:
    """``outgoing`` as ``fault`` changes it, with the fault named in its ``X-Mockllama-Fault`` header."""
    headers = CIMultiDict(outgoing.headers)
    headers[FAULT_HEADER] = str(fault)
    outgoing.headers = headers
    fault.kind.apply(fault.value, outgoing, plan)


def replaced_headers(headers: CIMultiDict | CIMultiDictProxy, error: Reply) -> CIMultiDict:
    """The recorded error's own headers, with mockllama's kept."""
    merged = CIMultiDict((name, value) for name, value in error.headers if name.lower() not in HOP_BY_HOP)
    for name, value in headers.items():
        if name.lower().startswith("x-mockllama-"):
            merged[name] = value
    return merged


# --- the faults, in the order help and docs list them: one class each ----------------------------


@register
class Disconnect(FaultKind):
    name, value, seen = "disconnect", "N", Seen.DROPPED
    help = "drop the connection after N stream events"
    wire = (
        "the connection is dropped after N stream events: no terminal event, no end of the chunked body. "
        "A plain body counts as one event, so `disconnect=0` drops it after the headers"
    )
    measured = ("3", "0")

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        outgoing.drop = value < len(outgoing.blocks)
        del outgoing.blocks[value:]


@register
class DisconnectBytes(FaultKind):
    name, value, seen = "disconnect-bytes", "N", Seen.DROPPED
    help = "drop the connection after N body bytes"
    wire = (
        "the connection is dropped after N body bytes; a plain body keeps its full `Content-Length`, "
        "so the client can tell it is short"
    )
    measured = ("100",)

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        kept, left = [], value
        for block in outgoing.blocks:
            if left <= 0:
                break
            kept.append(block[:left])
            left -= len(kept[-1])
        outgoing.drop = value < outgoing.whole_size
        outgoing.blocks = kept


@register
class TruncateStream(FaultKind):
    name, value, seen = "truncate-stream", "N", Seen.NO_TERMINAL_EVENT
    help = "end the stream cleanly after N events, no terminal event"
    wire = "the stream ends cleanly after N events: a complete HTTP reply with no terminal event"
    measured = ("3",)

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        del outgoing.blocks[value:]


@register
class TruncateJson(FaultKind):
    name, value, seen = "truncate-json", None, Seen.BROKEN_JSON
    help = "a complete reply whose JSON is cut in half"
    wire = (
        "a complete HTTP reply whose JSON stops halfway: half the body, or a stream's last event with half its `data`"
    )

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


@register
class Stall(FaultKind):
    name, value, seen = "stall", "MS", Seen.SILENCE
    help = "wait MS ms before the first byte"
    wire = "nothing at all for MS milliseconds, then the reply"
    measured = ("1000",)

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        outgoing.before += value / 1000


@register
class StallBetween(FaultKind):
    name, value, seen = "stall-between", "MS", Seen.SILENCE
    help = "wait MS ms before each later stream event"
    wire = "MS milliseconds before each stream event after the first (a plain body: between the headers and the body)"
    measured = ("1000",)

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        pause = value / 1000
        outgoing.waits = [0.0] + [pause] * (len(outgoing.blocks) - 1) if outgoing.stream else [pause]


@register
class Status(FaultKind):
    name, value, seen = "status", "CODE", Seen.ERROR_STATUS
    help = "llama-server's own recorded error reply for CODE"
    wire = "llama-server's own error reply for CODE, exactly as recorded, instead of the reply"

    def check(self, value: int, plan: FaultPlan) -> None:
        plan.recorded_error(value, f"{self.name}={value}")

    def examples(self, plan: FaultPlan) -> list[Fault]:
        return [Fault(self, code) for code in sorted(plan.errors)]

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        error = plan.errors[value]
        outgoing.replace(error, replaced_headers(outgoing.headers, error))


@register
class Unavailable(FaultKind):
    name, value, seen = "unavailable", "SECONDS", Seen.ERROR_STATUS
    help = "llama-server's own recorded 503, with Retry-After: SECONDS"
    wire = "llama-server's own recorded 503, as `status=503` sends it, with a `Retry-After: SECONDS` header"
    measured = ("1", "300")

    def check(self, value: int, plan: FaultPlan) -> None:
        plan.recorded_error(503, f"{self.name}={value}")

    def apply(self, value: int, outgoing: Outgoing, plan: FaultPlan) -> None:
        error = plan.errors[503]
        headers = replaced_headers(outgoing.headers, error)
        headers["Retry-After"] = str(value)
        outgoing.replace(error, headers)
