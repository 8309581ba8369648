"""Faults that real servers have, applied to one reply on its way out.

A fault belongs to a request, not to a recording: it is chosen per request (the
``X-Mockllama-Fault`` header, echoed in the reply) or per scenario (``serve --fault SCENARIO
FAULT``), and applied by the writer here, never to the cached reply a behaviour built.

    disconnect=N        close the connection after N stream events: no terminal event
                        (a non-streamed body counts as one event, so disconnect=0 cuts it)
    disconnect-bytes=N  close the connection after N body bytes
    truncate-stream=N   end the stream cleanly after N events: a complete HTTP reply with no
                        terminal event (a non-streamed body counts as one event)
    stall=MS            wait MS milliseconds before the first byte (the status line)
    stall-between=MS    wait MS milliseconds before each stream event after the first
                        (a non-streamed reply: between the headers and the body)
    status=CODE         answer llama-server's own recorded error reply for CODE instead
    truncate-json       end the reply mid-JSON: the body cut in half (a stream: its last
                        event's data), sent as a complete HTTP reply
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy, istr

from mockllama.behaviours.reply import Reply, recorded_reply
from mockllama.recordings.cassettes import Interaction, Scenario
from mockllama.server.journal import Trace
from mockllama.wire.errors import RequestError
from mockllama.wire.headers import HOP_BY_HOP

log = logging.getLogger("mockllama")

FAULT_HEADER = istr("X-Mockllama-Fault")  # istr: looked up on every request (server.app says why)
EVERY_SCENARIO = "*"
# ASCII digits only (str.isdigit also takes "²" and "٣"), and few enough of them for any wait: a
# stall of 400 digits made asyncio.sleep raise OverflowError. 999999999 ms is over eleven days.
WHOLE_NUMBER = re.compile(r"[0-9]{1,9}")
MAX_VALUE = 999_999_999

# name -> (what its value is, or None when it takes none; what it does)
FAULTS = {
    "disconnect": ("N", "close the connection after N stream events, with no terminal event"),
    "disconnect-bytes": ("N", "close the connection after N body bytes"),
    "truncate-stream": ("N", "end the stream cleanly after N events, a complete HTTP reply with no terminal event"),
    "stall": ("MS", "wait MS milliseconds before the first byte"),
    "stall-between": ("MS", "wait MS milliseconds before each stream event after the first"),
    "status": ("CODE", "answer llama-server's own recorded error reply for HTTP CODE"),
    "truncate-json": (None, "end the reply mid-JSON (a complete HTTP reply with half the body)"),
}


def usage() -> str:
    return ", ".join(name if value is None else f"{name}={value}" for name, (value, _) in FAULTS.items())


@dataclass(frozen=True)
class Fault:
    name: str
    value: int | None = None

    def __str__(self) -> str:
        return self.name if self.value is None else f"{self.name}={self.value}"


def parse_fault(text: str) -> Fault:
    """``"disconnect=3"`` -> Fault("disconnect", 3); a ValueError that lists the faults otherwise."""
    name, has_value, value = text.strip().partition("=")
    name = name.strip().lower()
    if name not in FAULTS:
        raise ValueError(f"unknown fault {text.strip()!r}; use one of: {usage()}")
    wanted = FAULTS[name][0]
    if wanted is None:
        if has_value:
            raise ValueError(f"the fault {name} takes no value (got {text.strip()!r})")
        return Fault(name)
    value = value.strip()
    if not WHOLE_NUMBER.fullmatch(value):
        raise ValueError(
            f"the fault {name} needs a whole number: {name}={wanted}, {wanted} from 0 to {MAX_VALUE} "
            f"(got {text.strip()!r})"
        )
    return Fault(name, int(value))


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
    """The faults set per scenario, and the recorded error replies ``status=CODE`` can send."""

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
        if fault.name == "status" and fault.value not in self.errors:
            recorded = ", ".join(str(code) for code in sorted(self.errors)) or "none"
            raise ValueError(
                f"no recording of llama-server answering HTTP {fault.value}, so status={fault.value} has no body "
                f"to send (recorded: {recorded}). Record one with `mockllama record` and serve it with --cassettes."
            )
        return fault

    def choose(self, header: str | None, scenario: str) -> Fault | None:
        """The request's ``X-Mockllama-Fault`` header, else the scenario's fault, else none."""
        if header is not None:
            try:
                return self.check(parse_fault(header))
            except ValueError as err:
                raise RequestError(400, f"mockllama: bad {FAULT_HEADER}: {err}") from None
        return self.by_scenario.get(scenario) or self.by_scenario.get(EVERY_SCENARIO)


FAULT_PLAN = web.AppKey("fault_plan", FaultPlan)


def with_fault_header(headers: CIMultiDictProxy, fault: Fault) -> CIMultiDict:
    headers = CIMultiDict(headers)
    headers[FAULT_HEADER] = str(fault)
    return headers


def _blocks(reply: Reply) -> list[bytes]:
    return [event.raw for event in reply.events] if reply.events is not None else [reply.body]


def _half_json(reply: Reply) -> list[bytes]:
    """The blocks with the last one's JSON cut in half: a body mid-object, or a stream's last data line."""
    blocks = _blocks(reply)
    last = blocks[-1]
    if reply.events is None:
        return [last[: len(last) // 2]]
    head, marker, data = last.partition(b"data: ")
    data = data.rstrip(b"\n")
    return [*blocks[:-1], head + marker + data[: len(data) // 2] + b"\n\n"]


def _cut_after_bytes(blocks: list[bytes], limit: int) -> list[bytes]:
    kept, left = [], limit
    for block in blocks:
        if left <= 0:
            break
        kept.append(block[:left])
        left -= len(kept[-1])
    return kept


async def write_with_fault(
    request: web.Request, trace: Trace, reply: Reply, headers: CIMultiDictProxy, fault: Fault, plan: FaultPlan
) -> web.StreamResponse:
    """Write ``reply`` as the fault says. The journal learns the bytes sent and whether all went out."""
    headers = with_fault_header(headers, fault)
    if fault.name == "status":
        reply = plan.errors[fault.value]
        headers = _replaced_headers(headers, reply)
    if fault.name == "stall":
        await asyncio.sleep(fault.value / 1000)
    blocks = _blocks(reply)
    count, size = len(blocks), sum(len(block) for block in blocks)
    drop, pause = False, 0.0  # drop: close the connection instead of ending the reply
    if fault.name == "disconnect":
        blocks, drop = blocks[: fault.value], fault.value < count
    elif fault.name == "disconnect-bytes":
        blocks, drop = _cut_after_bytes(blocks, fault.value), fault.value < size
    elif fault.name == "truncate-stream":
        blocks = blocks[: fault.value]
    elif fault.name == "truncate-json":
        blocks = _half_json(reply)
    elif fault.name == "stall-between":
        pause = fault.value / 1000
    all_sent = sum(len(block) for block in blocks) == size and len(blocks) == count
    return await _write(request, trace, reply, headers, blocks, drop, all_sent, pause)


def _replaced_headers(headers: CIMultiDict, error: Reply) -> CIMultiDict:
    """The recorded error's own headers, with mockllama's kept."""
    merged = CIMultiDict((name, value) for name, value in error.headers if name.lower() not in HOP_BY_HOP)
    for name, value in headers.items():
        if name.lower().startswith("x-mockllama-"):
            merged[name] = value
    return merged


async def _write(
    request: web.Request,
    trace: Trace,
    reply: Reply,
    headers: CIMultiDict,
    blocks: list[bytes],
    drop: bool,
    all_sent: bool,
    pause: float,
) -> web.StreamResponse:
    if reply.events is None and not drop and not pause:
        # Whole plain bodies go out as aiohttp sends them, after the handler returns, so that the
        # journal has the entry before the client has the reply.
        body = b"".join(blocks)
        trace.bytes_sent, trace.finished = len(body), all_sent
        return web.Response(status=reply.status, reason=reply.reason, body=body, headers=headers)
    trace.bytes_sent, trace.finished = 0, False
    response = web.StreamResponse(status=reply.status, reason=reply.reason, headers=headers)
    if reply.events is None:
        # A plain body keeps a Content-Length: the full one when the connection is to be dropped,
        # so that the client can tell the body is short; else the length of what is sent.
        response.content_length = len(reply.body) if drop else sum(len(block) for block in blocks)
    try:
        await response.prepare(request)
        for index, block in enumerate(blocks):
            if pause and (index > 0 or reply.events is None):
                await asyncio.sleep(pause)
            await response.write(block)
            trace.bytes_sent += len(block)
        if drop:
            trace.drop_connection = True  # the journal's wrapper closes it, once the entry is written
            return response
        # aiohttp ends the reply once the handler returns: after the journal has its entry, so a
        # client can never see the end of a reply before the journal does.
        trace.finished = all_sent
    except ConnectionResetError:
        log.debug("mockllama: client went away during a faulted reply on %s", request.path)
    return response
