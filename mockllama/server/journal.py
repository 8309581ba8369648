"""The request journal: what each client request asked for, and what mockllama sent back.

The journal observes the request's journey from outside. The server's wrapper around each route
handler (``server.app.answers_errors``, given the app's journal) starts the request's ``Trace``
and hands the finished reply to ``Journal.keep``; the handler leaves what only it knows (the
body it read, the selection, the bytes its writer sent) on the trace, and everything else is
read from the finished reply and its ``X-Mockllama-*`` headers. Replays and error replies are
both journalled; the journal's own route and the teaching page are not.

Memory is bounded: a ring of the last ``size`` entries (``serve --journal-size``, default
1000; 0 switches journalling off); each request body kept up to ``body_cap`` bytes
(``--journal-body-bytes``, 256 KiB, so a coding agent's whole request fits), and all the bodies
kept together up to ``body_budget`` bytes (``--journal-bytes``, 32 MiB): past it, the oldest
entries lose their bodies first and keep the rest, flagged ``body_dropped``.

The server may run on another thread than the test reading the journal (the pytest plugin). Only
the server's event loop writes entries, and it takes no lock to: each entry's number comes from
``next()`` on a counter, its slot is marked as being written before it is, its id goes in last
with the rest of its numbers in one call, and the last number is published after that, so a
reader on another thread never sees a number whose entry is not in the ring yet, nor a slot half
written (``Journal``, ``Journal.snapshot``).

Journalling is on every request's path, so it only keeps what it sees there (the reply's headers
object included, not read); the ``Entry`` is built when someone reads it. And it makes no object
of its own to keep: the numbers are packed into one ``bytearray``, the rest are references to what
the request already had (each method and path held once for all). A tuple kept per entry, made
and freed 1,000 requests apart, cost each request about 60 more misses of a simulated 1 MiB
level-2 cache at 64 connections (212 against 149 with the journal off); kept this way, about 20
(``python -m benchmarks --cache-misses``). ``python -m benchmarks --journal-cost`` measures what
that costs in req/s.

Reading it over HTTP holds one slice of entries' JSON at a time, whatever the journal holds: the
reply is a snapshot (the entries as they were when the read began; a clear or a new entry during
it changes nothing in it), written a slice at a time, each made into JSON on a worker thread, and
the next made only once the client has taken the last. Made into one document on the event loop,
32 MiB of bodies took over 500 MB and held every other client up 1.4 s or more.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import struct
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from mockllama.matching.matcher import parse_request_json
from mockllama.wire.errors import RequestError

log = logging.getLogger("mockllama")

DEFAULT_JOURNAL_SIZE = 1000
# Request body bytes kept per entry; larger bodies are cut and flagged. A coding agent's first
# request (its system prompt and every tool's schema) is tens of KiB.
DEFAULT_BODY_CAP = 256 * 1024
# Body bytes kept by the whole ring: what bounds its memory, since 1000 bodies at the cap would
# hold 256 MiB. Past it, the oldest entries lose their bodies.
DEFAULT_BODY_BUDGET = 32 * 1024 * 1024
# A journal read makes up to this many bytes of request bodies into JSON at a time (or one entry,
# if its body is larger), on a worker thread: what a read holds beyond the snapshot, and how long
# it holds the interpreter at a time (a body's JSON grows up to six times: control bytes as \u0001).
RENDER_SLICE_BYTES = 256 * 1024
# ... and at most this many entries, however small their bodies: a few milliseconds' work.
RENDER_SLICE_ENTRIES = 200
# The one thread that does it, for every read of every server in the process: readers take turns a
# slice at a time, and however many there are, one thread more, not one per read or per server.
_RENDERING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mockllama-journal")

# aiohttp >= 3.12 wants typed keys for request storage; older versions take a plain string.
_RequestKey = getattr(web, "RequestKey", None)


class Trace:
    """What the handler and its writer learn on the way, for the journal to read at the end."""

    __slots__ = ("started", "raw", "turn", "headers", "bytes_sent", "finished", "drop_connection")

    def __init__(self) -> None:
        self.started = time.time()
        self.raw: bytes | None = None  # the request body, once read
        self.turn: int | None = None  # the conversation turn, where the selection has one
        # The reply's headers as the handler built them, where they are shared by many replies and
        # never change: the journal keeps those rather than each reply's own copy, one less to hold
        # and to free per entry. None: the reply's own are read.
        self.headers: CIMultiDictProxy | CIMultiDict | None = None
        self.bytes_sent: int | None = None  # body bytes written, set by streaming writers
        self.finished: bool | None = None  # whether the whole reply went out
        self.drop_connection = False  # a fault cut the reply: close the connection once journalled


TRACE = _RequestKey("mockllama_trace", Trace) if _RequestKey else "mockllama_trace"


def trace_of(request: web.Request) -> Trace:
    """The request's trace; a throwaway one for a request no journal observes."""
    try:
        return request[TRACE]  # not request.get: a Python call more on every request
    except KeyError:
        trace = request[TRACE] = Trace()
        return trace


@dataclass(frozen=True)
class Entry:
    """One answered request. ``body`` is the request body parsed as JSON (a string when it is not
    JSON, None when there was none); ``body_truncated`` says it was cut at the journal's per-body
    cap, ``body_dropped`` that it was let go, with the oldest, to keep all the bodies within the
    journal's budget (``body`` is then None)."""

    id: int
    time: float  # seconds since the epoch, when the request arrived
    duration_ms: float  # from arrival to the end of the reply
    method: str
    path: str
    behaviour: str
    scenario: str | None
    turn: int | None
    selected_by: str | None
    fault: str | None
    status: int
    stream: bool
    finished: bool
    bytes_sent: int
    raw_body: bytes | None
    body_truncated: bool
    error: str | None  # the error message of an error reply
    body_dropped: bool = False

    @property
    def body(self):
        if self.raw_body is None or not self.raw_body:
            return None
        if not self.body_truncated:
            try:  # JSON as the server reads it: json.loads takes NaN, which json.dumps writes, and is no JSON
                return parse_request_json(self.raw_body)
            except (ValueError, RecursionError):  # a body nested too deep for the parser is shown as text
                pass
        return self.raw_body.decode("utf-8", errors="replace")

    def to_dict(self) -> dict:
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "raw_body"}
        return {**fields, "body": self.body}


# One entry's numbers, packed into the ring's bytes in one call: its id, arrival and end times,
# status, turn (plus one; 0: none), body bytes sent and flags.
_RECORD = struct.Struct("=qddqqqq")
_FIELDS = _RECORD.size // 8  # 8-byte words a record has: slot n's id is word number n * _FIELDS
_FINISHED, _TRUNCATED, _HAD_BODY = 1, 2, 4
# What a slot holds by reference, in the ring's list: the method, the path, the reply's headers, the
# request body (at _BODY) and the error message.
_REFERENCES, _BODY = 5, 3
# Methods and paths held once each, however many requests sent them, up to this many of up to this
# many characters (256 KiB at most, held for the server's life); past them (a client that sends a
# new path each time), each entry holds its own.
_NAMES_HELD, _NAME_CHARS_HELD = 1024, 256


class Journal:
    """A ring of the last ``size`` entries, numbered from 1 in arrival order, written by one thread
    (the server's event loop) and read from any. Each body is kept up to ``body_cap`` bytes, and
    the bodies together up to ``body_budget``: the oldest lose theirs first.

    Entry ``n`` is in slot ``n % size``: its numbers packed in ``_records``, its references in
    ``_refs``. The writer takes no lock (``keep`` says how it writes a slot); a reader copies the
    records, the references and the records again, and takes only the slots whose id is the same
    in both copies, up to the last id it read first (``snapshot``)."""

    def __init__(
        self, size: int = DEFAULT_JOURNAL_SIZE, body_cap: int = DEFAULT_BODY_CAP, body_budget: int = DEFAULT_BODY_BUDGET
    ):
        if size < 0:
            raise ValueError(f"the journal size must be 0 (off) or more, not {size}")
        if not 0 <= body_cap <= body_budget:
            raise ValueError(f"a body cap of {body_cap} bytes does not fit a budget of {body_budget} bytes")
        self.size, self.body_cap, self.body_budget = size, body_cap, body_budget
        self._records = bytearray(_RECORD.size * size)
        self._slot_ids = memoryview(self._records).cast("q")  # each record read as 8-byte words
        self._refs: list = [None] * (_REFERENCES * size)
        self._names: dict[str, str] = {}
        self._body_bytes = 0  # of the bodies the ring holds
        self._body_floor = 1  # no entry numbered below it holds a body
        self._ids = itertools.count(1)
        self._last_id = 0  # set only once its entry is in the ring
        self._cleared = 0  # entries up to this id were cleared

    @property
    def enabled(self) -> bool:
        return self.size > 0

    @property
    def last_id(self) -> int:
        return self._last_id

    def keep(self, request: web.Request, response: web.StreamResponse, trace: Trace) -> None:
        """The hot path: number and keep what this exchange shows in its slot; nothing is read or
        built yet (``_entry`` does that when the journal is read). No lock: the slot is written in
        three steps, each a single call that a reader on another thread cannot get into the middle
        of (the slot's id zeroed, so that no reader takes it; its references replaced; its record
        packed with the id), and the last id published after them. One method, not a function
        that calls one: it runs on every request."""
        raw, status, bytes_sent, headers = trace.raw, response.status, trace.bytes_sent, trace.headers
        flags = _FINISHED if bytes_sent is None or trace.finished else 0
        if raw:
            flags |= _HAD_BODY
            if len(raw) > self.body_cap:
                raw, flags = raw[: self.body_cap], flags | _TRUNCATED
        number = next(self._ids)
        slot = number % self.size
        self._slot_ids[slot * _FIELDS] = 0
        refs, names, at = self._refs, self._names, slot * _REFERENCES
        old = refs[at + _BODY]
        if old:
            self._body_bytes -= len(old)
        method, path, turn = request.method, request.path, trace.turn
        refs[at : at + _REFERENCES] = (
            names.get(method) or self._held(method),
            names.get(path) or self._held(path),
            response.headers if headers is None else headers,
            raw,
            None if status < 400 else _error_message(response),
        )
        _RECORD.pack_into(
            self._records,
            slot * _RECORD.size,
            number,
            trace.started,
            time.time(),
            status,
            0 if turn is None else turn + 1,
            _body_length(response) if bytes_sent is None else bytes_sent,
            flags,
        )
        if raw:
            self._body_bytes += len(raw)
            if self._body_bytes > self.body_budget:
                self._let_bodies_go(number)
        self._last_id = number

    def _held(self, name: str) -> str:
        """``name``, held from now on for every entry that has it, while there is room."""
        if len(self._names) < _NAMES_HELD and len(name) <= _NAME_CHARS_HELD:
            self._names[name] = name
        return name

    def _let_bodies_go(self, newest: int) -> None:
        """Drop the oldest entries' bodies until the rest fit the budget; their entries stay,
        flagged ``body_dropped``. The newest's fits alone (``body_cap`` is within the budget)."""
        ids, refs, size = self._slot_ids, self._refs, self.size
        number = max(self._body_floor, newest - size + 1)  # clear() moves the floor past what it cleared
        while number < newest and self._body_bytes > self.body_budget:
            slot = number % size
            at = slot * _REFERENCES + _BODY
            body = refs[at]
            if body and ids[slot * _FIELDS] == number:
                refs[at] = None
                self._body_bytes -= len(body)
            number += 1
        self._body_floor = number

    def entries(self, scenario: str | None = None, since: int = 0) -> list[Entry]:
        """In order; only those after entry ``since``, and only one scenario's, when asked."""
        return self.snapshot(scenario, since)[0]

    def snapshot(self, scenario: str | None = None, since: int = 0) -> tuple[list[Entry], int]:
        """``entries(...)`` and the last id given out, read together: an entry numbered past the
        id read is left for the next read, as if it had come after."""
        last_id = self._last_id
        after_id = max(since, self._cleared)
        # Each copy is one C call, which the writer's thread cannot get into the middle of.
        before = bytes(self._records)
        refs = list(self._refs)
        after = memoryview(bytes(self._records)).cast("q")
        chosen = sorted(
            (record, slot)
            for slot, record in enumerate(_RECORD.iter_unpack(before))
            if after_id < record[0] <= last_id and after[slot * _FIELDS] == record[0]
        )
        entries = [_entry(record, refs[slot * _REFERENCES : (slot + 1) * _REFERENCES]) for record, slot in chosen]
        return [e for e in entries if scenario is None or e.scenario == scenario], last_id

    def clear(self) -> None:
        """Forget every entry; numbering goes on, so an earlier ``since`` stays meaningful."""
        self._cleared = self._last_id
        refs = self._refs
        for at in range(_BODY, len(refs), _REFERENCES):
            refs[at] = None
        self._body_bytes = 0
        self._body_floor = self._last_id + 1


JOURNAL = web.AppKey("journal", Journal)


def _error_message(response: web.StreamResponse) -> str | None:
    body = response.body if isinstance(response, web.Response) else None
    if not isinstance(body, (bytes, bytearray)) or not body:  # a Payload is never an error reply's body
        return None
    try:
        return json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return None


def _body_length(response: web.StreamResponse) -> int:
    """The bytes of a reply sent whole (a writer that streams counts its own on the trace)."""
    body = response.body if isinstance(response, web.Response) else None
    return len(body) if isinstance(body, (bytes, bytearray)) else 0


def _entry(record: tuple, refs: list) -> Entry:
    """The Entry for what ``Journal.keep`` kept in a slot (from a reader's copies). The reply's
    headers are final by now: aiohttp only adds its own (Date, Content-Length) when it sends them."""
    method, path, headers, raw, error = refs
    number, started, ended, status, turn, bytes_sent, flags = record
    scenario = headers.get("X-Mockllama-Scenario", "none")
    return Entry(
        id=number,
        time=started,
        duration_ms=round((ended - started) * 1000, 3),
        method=method,
        path=path,
        behaviour=headers.get("X-Mockllama-Behaviour", "none"),
        scenario=None if scenario == "none" else scenario,
        turn=turn - 1 if turn else None,
        selected_by=headers.get("X-Mockllama-Selected-By"),
        fault=headers.get("X-Mockllama-Fault"),
        status=status,
        stream=headers.get("Content-Type", "").startswith("text/event-stream"),
        finished=bool(flags & _FINISHED),
        bytes_sent=bytes_sent,
        raw_body=raw,
        body_truncated=bool(flags & _TRUNCATED),
        error=error,
        body_dropped=bool(flags & _HAD_BODY) and raw is None,
    )


def _since(request: web.Request) -> int:
    text = request.query.get("since", "0")
    try:
        since = int(text)
    except ValueError:
        since = -1
    if since < 0:
        raise RequestError(400, f"mockllama: ?since= takes an entry id (a whole number >= 0), not {text!r}.")
    return since


async def journal_route(request: web.Request) -> web.StreamResponse:
    """``GET /_mockllama/journal[?scenario=NAME][&since=ID]`` reads it; ``DELETE`` clears it. No page
    on another origin may do either unless ``--cors-origin`` names it: ``add_route`` puts
    ``cors.own_route`` around every ``/_mockllama/`` path."""
    journal = request.app[JOURNAL]
    if request.method == "DELETE":
        journal.clear()
        return web.json_response({"cleared": True, "last_id": journal.last_id})
    if request.method != "GET":
        raise web.HTTPMethodNotAllowed(request.method, ["GET", "DELETE"])
    entries, last_id = journal.snapshot(request.query.get("scenario"), _since(request))
    # The document json.dumps would make of it, the entries written a slice at a time: its head
    # is that of the document with no entry, cut before the list's end.
    head = json.dumps({"size": journal.size, "last_id": last_id, "entries": []})[: -len("]}")]
    response = web.StreamResponse(headers={"Content-Type": "application/json; charset=utf-8"})
    loop = asyncio.get_running_loop()
    await response.prepare(request)
    try:
        await response.write(head.encode())
        for start, stop in _slices(entries):
            # off the event loop, and the next slice only once this one is written (aiohttp's
            # write waits while the client lags): one slice's JSON at a time
            rendering = loop.run_in_executor(_RENDERING, _rendered, entries, start, stop)
            await response.write(await rendering)
        await response.write(b"]}")
    # the client went away: nothing left to send it. aiohttp says so as a reset, or, when the
    # socket's send found the pipe broken first, as a plain ConnectionError("Connection lost")
    except ConnectionError:
        log.debug("mockllama: a journal reader went away")
    except Exception:  # the head is out, so no error reply can follow: the client sees the reply cut
        log.exception("mockllama: could not write the journal; its reply is cut short")
        if request.transport is not None:
            request.transport.close()
    return response


def _slices(entries: list[Entry]):
    """(start, stop) of each run of entries made into JSON together: up to RENDER_SLICE_BYTES of
    bodies (a larger body alone), up to RENDER_SLICE_ENTRIES entries."""
    start, body_bytes = 0, 0
    for index, entry in enumerate(entries):
        size = len(entry.raw_body or b"")
        if index > start and (body_bytes + size > RENDER_SLICE_BYTES or index - start >= RENDER_SLICE_ENTRIES):
            yield start, index
            start, body_bytes = index, 0
        body_bytes += size
    if start < len(entries):
        yield start, len(entries)


def _rendered(entries: list[Entry], start: int, stop: int) -> bytes:
    """Entries ``start`` to ``stop`` as they go into the list, each after a ``", "`` but the first."""
    text = ", ".join(json.dumps(entry.to_dict(), allow_nan=False) for entry in entries[start:stop])
    return (", " + text if start else text).encode()
