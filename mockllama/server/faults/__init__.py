"""Faults that real servers have, applied to one reply on its way out: the registry of fault kinds.

A fault belongs to a request, not to a recording: it is chosen per request (the
``X-Mockllama-Fault`` header, echoed in the reply) or per scenario (``serve --fault SCENARIO
FAULT``), and applied by ``FaultStep`` (``server.steps.fault``), one of the outgoing steps, to what goes
out, never to the cached reply a behaviour built.

Each kind of fault is one module of ``server.faults.kinds``, found there as this package is imported
(``discover``): a ``FaultKind`` subclass that registers itself in ``KINDS`` with ``@register`` and
declares its name, its place in the list, what its value is, its help, what it does to the reply
going out, what a client sees, and the values the fault matrix measures it with, each with what the
openai SDK is expected to do (``SdkOutcome``). ``serve --help``, the table in docs/faults.md and the
fault matrix (``teaching.fault_matrix``) are made from ``KINDS``; nothing else lists the faults.
This module holds what the kinds share: parsing, the plan of faults per scenario, applying one.
"""

from __future__ import annotations

import enum
import importlib
import pkgutil
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
KIND_MODULES = f"{__name__}.kinds"  # the package whose every module is one fault kind


class Seen(enum.Enum):
    """What a client sees of a fault."""

    DROPPED = "the connection drops before the reply is whole"
    NO_TERMINAL_EVENT = "a complete HTTP reply: a stream without its terminal event"
    BROKEN_JSON = "a complete HTTP reply whose JSON does not parse"
    SILENCE = "nothing for a while: a client with a shorter timeout gives up"
    ERROR_STATUS = "an HTTP error status, in llama-server's error shape"


@dataclass(frozen=True)
class SdkOutcome:
    """What the official openai SDK is expected to do under one fault, as the fault matrix
    (``teaching.fault_matrix``, docs/faults.md) writes its cells: each of ``create``, ``stream``
    (iterating ``create(stream=True)``) and ``helper`` (the ``stream()`` helper's final response) is
    how that cell begins, and ``requests`` is how many requests the server sees from one ``create``
    with the SDK's default two retries. tests/teaching/test_fault_matrix.py holds each fault to it."""

    create: str
    stream: str
    helper: str
    requests: int

    @classmethod
    def raises(cls, error: str, requests: int) -> SdkOutcome:
        """Every call raises ``error`` (how its cell begins: ``"APITimeoutError: "``)."""
        return cls(error, error, error, requests)


# How the SDK's own errors read in the matrix, for the kinds that share them.
CONNECTION_ERROR = "APIConnectionError: Connection error."
TIMED_OUT = "APITimeoutError: Request timed out."


class FaultKind:
    """One kind of fault. A subclass, alone in a module of ``server.faults.kinds``, sets the class
    attributes, implements ``apply``, and is registered with ``@register``; its value is a whole
    number (``N``, ``MS``, ``CODE``, ...) or none."""

    name: ClassVar[str]
    order: ClassVar[int]  # its place in help and docs, smallest first (the kinds use 10, 20, ...)
    value: ClassVar[str | None] = None  # what its value is, as help writes it; None: it takes none
    help: ClassVar[str]  # one line, for serve --help
    wire: ClassVar[str]  # what goes out on the wire, for the table in docs/faults.md
    seen: ClassVar[Seen]
    # The values the fault matrix measures it with (None for a kind that takes none), each with what
    # the openai SDK is expected to do under it.
    measured: ClassVar[dict[int | None, SdkOutcome]] = {}

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
        return [Fault(self, value) for value in self.measured]

    def outcome(self, value: Any) -> SdkOutcome:
        """What the openai SDK is expected to do under this kind with ``value``, one of ``examples``."""
        return self.measured[value]

    def apply(self, value: Any, outgoing: Outgoing, plan: FaultPlan) -> None:
        raise NotImplementedError


KINDS: dict[str, FaultKind] = {}  # by name, in the order help and docs list them (each kind's ``order``)
DECLARED = ("name", "order", "help", "wire", "seen")  # what a kind must declare, having no default


def register(kind: type[FaultKind]) -> type[FaultKind]:
    """Add ``kind`` to ``KINDS``, in its place; a kind named twice, or missing a declaration, is refused."""
    if getattr(kind, "name", None) in KINDS:
        raise ValueError(f"a fault named {kind.name!r} is registered already")
    missing = [attribute for attribute in DECLARED if not hasattr(kind, attribute)]
    if missing:
        raise TypeError(f"the fault kind {kind.__qualname__} does not declare {', '.join(missing)}")
    placed = sorted([*KINDS.values(), kind()], key=lambda each: each.order)
    KINDS.clear()
    KINDS.update((each.name, each) for each in placed)
    return kind


def discover(package: str = KIND_MODULES) -> list[str]:
    """Import every module of ``package``, each registering its kind as it is imported; the names
    of the kinds that registered."""
    before = set(KINDS)
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
        importlib.import_module(f"{package}.{module.name}")
    return [name for name in KINDS if name not in before]


def usage() -> str:
    return ", ".join(kind.usage for kind in KINDS.values())


def help_lines() -> list[str]:
    """One line a fault, its usage and its help, for ``serve --help``."""
    width = max(len(kind.usage) for kind in KINDS.values()) + 2
    return [f"{kind.usage:<{width}}{kind.help}" for kind in KINDS.values()]


def markdown_table() -> str:
    """The list of faults in docs/faults.md: what each sends and what a client sees."""
    lines = ["| fault | on the wire | what a client sees |", "| --- | --- | --- |"]
    lines += [f"| `{kind.usage}` | {kind.wire} | {kind.seen.value} |" for kind in KINDS.values()]
    return "\n".join(lines)


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


discover()  # last: each kind's module imports what is above
