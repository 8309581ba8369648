"""Recording on a miss: forward the request to the upstream llama-server, record it, serve it at once.

One upstream exchange is a *flight*. Clients that miss with the same request at the same time
share one flight: one upstream generation, one recording. A flight runs as its own task, so a
client that goes away does not cut the recording short.

What a flight does, in order:
1. reads the upstream's ``/props`` and ``/v1/models`` the first time (provenance, as ``record``);
2. forwards the request and hands the reply on as it arrives, block by block for a stream,
   holding it in a ``Spool`` (in memory while small, then in a temporary file) and within the
   byte budget that all replies in flight share;
3. for a ``/v1/responses`` request answered 200, fetches its chat twin, the same conversion
   ``mockllama record`` uses, with the same stream flag. The twin is sent only once the first
   reply is complete: a client following the stream never shares the upstream with it;
4. in a thread, one at a time, writes the cassette the way ``record`` does (scrubbed,
   atomically; ``record.save_cassette``), loads it from its temporary file with the loader
   ``serve`` uses, and only then renames it into place and updates ``provenance.json``; back on
   the event loop, adds it to the live matcher.
Nothing is written unless every step succeeded, and nothing that would not load: a reply that
cannot be recorded reaches a waiting client as a 502 that says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import hashlib
import itertools
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web
from yarl import URL

from mockllama.matching.canonical import canonical_key
from mockllama.matching.matcher import Matcher
from mockllama.recordings.cassettes import (
    CassetteError,
    Interaction,
    Scenario,
    bundled_names,
    load_cassette,
    read_cassette,  # the safe reading every load uses
    request_limit,
)
from mockllama.recordings.catalogue import PlannedRequest
from mockllama.recordings.chat_twin import chat_twin, turn_of
from mockllama.recordings.record import (
    PROVENANCE_FILE,
    Outcome,
    RecordError,
    ServerInfo,
    probe,
    save_cassette,
    write_provenance,
)
from mockllama.upstream.client import (
    UPSTREAM_ERRORS,
    Upstream,
    forwarded_headers,
    open_session,
    parse_upstream,
    unreachable,
)
from mockllama.upstream.options import SHUTDOWN_GRACE, RecordingOptions, record_dir
from mockllama.upstream.record_mode import RecordMode
from mockllama.upstream.spool import BLOCK_BYTES, DEFAULT_REPLY_BUDGET, SPOOL_THRESHOLD, ReplyBudget, Spool
from mockllama.wire.errors import RequestError
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from mockllama.wire.sizes import DEFAULT_MAX_REPLY_BYTES
from mockllama.wire.terminal import printable

log = logging.getLogger("mockllama")

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
RECORDED_REQUEST_HEADERS = ("Content-Type",)  # matching never reads headers; nothing else is kept
# A blank line ends an SSE block; the spec lets a line end in CRLF, LF or CR alone.
BLANK_LINE = re.compile(rb"(?:\r\n|\r(?!\n)|\n){2}")


@dataclass(frozen=True)
class RecordOnMiss:
    """What ``serve --upstream URL --record-to DIR --record-mode MODE`` asks for."""

    upstream: Upstream
    record_to: Path
    mode: RecordMode = RecordMode.NEW
    # as `record --max-reply-bytes`: a recording is served from memory, so a reply's size is bounded
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    shutdown_grace: float = SHUTDOWN_GRACE
    # upstream reply bytes all recordings in progress may hold between them; and past how many
    # bytes one reply is held in a temporary file instead of memory (upstream.spool)
    reply_budget: int = DEFAULT_REPLY_BUDGET
    spool_threshold: int = SPOOL_THRESHOLD


@dataclass(frozen=True)
class Sent:
    """The client's request, as forwarded and as recorded: the body is the exact bytes sent."""

    method: str
    path: str  # without the behaviour prefix
    query: str  # raw, as the client wrote it
    raw: bytes
    headers: tuple[tuple[str, str], ...]
    scenario_header: str | None

    @property
    def body(self):
        try:
            return json.loads(self.raw) if self.raw else None
        except ValueError:
            return None

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    def key(self) -> tuple:
        """Requests that the matcher takes for the same one share a flight."""
        body = self.body
        same = canonical_key(self.path, body) if body is not None else self.raw
        return self.method, self.path, self.scenario_header, same


@dataclass(frozen=True)
class Head:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    stream: bool


@dataclass(frozen=True)
class Exchange:
    """One upstream request and its reply, the body in a spool until the recording is written."""

    request: object  # vcr.request.Request, as recorded
    status: int
    reason: str
    headers: dict[str, list[str]]
    spool: Spool

    def pair(self) -> tuple:
        """The (request, response) pair vcrpy writes, with the body read back whole."""
        reply = {"status": {"code": self.status, "message": self.reason}, "headers": self.headers}
        return self.request, {**reply, "body": {"string": self.spool.read()}}


@dataclass(eq=False)
class Flight:
    name: str  # the scenario it records
    sent: Sent
    spool: Spool  # the upstream's reply to the client's request, as it arrives
    head: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    recorded: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    finished: bool = False  # the upstream's reply to the client's request is complete
    writing: bool = False  # the recording is being written (on disk, no longer upstream)
    held: int = 0  # bytes of the reply budget this flight holds
    error: RequestError | None = None
    clients: int = 0  # handlers that may still read the spool
    landed: bool = False  # the flight's task is over
    _more: asyncio.Event = field(default_factory=asyncio.Event)

    def more(self) -> None:
        """New blocks are in the spool."""
        self._wake()

    def finish(self) -> None:
        self.finished = True
        self._wake()

    def fail(self, error: RequestError) -> None:
        self.error = error
        for future in (self.head, self.recorded):
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: a flight nobody waits on must not log a warning
        self._wake()

    def _wake(self) -> None:
        self._more.set()
        self._more = asyncio.Event()

    async def follow(self):
        """The reply's blocks as they arrive; raises the flight's error if it breaks off."""
        index = 0
        while True:
            if index < len(self.spool):
                index += 1
                yield self.spool.block(index - 1)
                continue
            if self.finished:
                return
            if self.error is not None:
                raise self.error
            await self._more.wait()

    async def complete(self) -> None:
        """Until the whole reply is in; raises the flight's error if it breaks off."""
        while not self.finished:
            if self.error is not None:
                raise self.error
            await self._more.wait()

    def leave(self) -> None:
        """A handler is done with the flight (``Recorder.flight_for`` counted it in)."""
        self.clients -= 1
        self._drop_spool()

    def land(self) -> None:
        """The flight's task is over: the spool goes once no handler may read it."""
        self.landed = True
        self._drop_spool()

    def _drop_spool(self) -> None:
        if self.landed and self.clients <= 0:
            self.spool.close()


def block_end(pending: bytearray) -> int:
    """Where the first whole SSE block in ``pending`` ends, or -1. A CR at the very end may be the
    first half of a CRLF still on its way, so it ends nothing yet."""
    found = BLANK_LINE.search(pending)
    if found is None or (found.end() == len(pending) and pending.endswith(b"\r")):
        return -1
    return found.end()


def prompt_text(body) -> str:
    """The last user turn's text, for a readable file name."""
    if not isinstance(body, dict):
        return ""
    turns = body.get("input") if "input" in body else body.get("messages")
    if isinstance(turns, str):
        return turns
    for turn in reversed(turns if isinstance(turns, list) else []):
        if isinstance(turn, dict) and turn.get("role", "user") == "user":
            content = turn.get("content")
            if isinstance(content, list):
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def slug_name(sent: Sent) -> str:
    """``count-from-1-to-200-separated-by-spaces-8-1a2b3c``: prompt, limit, and a digest of the
    request (stream flag aside, so the streamed and plain variants share one cassette)."""
    if sent.method == "GET":
        return "get-" + re.sub(r"[^a-z0-9]+", "-", sent.path.lower()).strip("-")
    body = sent.body
    words = re.sub(r"[^a-z0-9]+", "-", prompt_text(body).lower()).strip("-")[:40].strip("-")
    words = words or re.sub(r"[^a-z0-9]+", "-", sent.path.lower()).strip("-")
    limit = request_limit(body)
    same = canonical_key(sent.path, {**body, "stream": False}) if isinstance(body, dict) else repr(sent.raw)
    # surrogatepass: a lone surrogate ("\ud800") is valid in a JSON string, not in UTF-8
    digest = hashlib.sha256(f"{sent.method} {sent.path} {same}".encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return "-".join([words, *([str(limit)] if limit is not None else []), digest])


def _request_key(method: str, path: str, body) -> tuple[str, str, bool, int]:
    """What a recording in a scenario answers: the route, the stream flag, and the conversation's
    turn, as ``Scenario.find`` looks it up. A recording with the same key is replaced; one with
    another turn is kept, so an agent loop recorded under one name keeps every turn, as vcrpy's
    ``new_episodes`` keeps every episode."""
    if isinstance(body, bytes):
        try:
            body = json.loads(body)
        except ValueError:
            body = None
    stream = isinstance(body, dict) and body.get("stream") is True
    return method.upper(), path, stream, turn_of(path, body)


def _vcr_key(request) -> tuple[str, str, bool, int]:
    return _request_key(request.method, request.parsed_uri.path, request.body)


def _responses_status(interaction: Interaction) -> str | None:
    if interaction.is_event_stream:
        last: dict = next((e.json() for e in reversed(interaction.events) if isinstance(e.json(), dict)), {})
        return (last.get("response") or {}).get("status")
    body = interaction.body_json
    return body.get("status") if isinstance(body, dict) else None


def summary(scenario: Scenario, interaction: Interaction) -> str:
    """What provenance.json says of a recording, in ``record``'s words."""
    if interaction.path == RESPONSES_PATH and interaction.status == 200:
        return f"responses={_responses_status(interaction)} twin={scenario.twin_finish_reason(interaction)}"
    return f"{interaction.path}:{interaction.status}"


def record_on_miss(options: RecordingOptions) -> RecordOnMiss | None:
    """What ``serve --upstream`` does with a miss; None, without an upstream: replay only."""
    if options.upstream is None:
        return None
    return RecordOnMiss(
        parse_upstream(options.upstream, options.upstream_timeout),
        record_dir(options),
        options.record_mode or RecordMode.NEW,
        options.max_reply_bytes or DEFAULT_MAX_REPLY_BYTES,
        shutdown_grace=options.shutdown_grace,
        reply_budget=options.reply_budget,
    )


class Recorder:
    """The flights in the air, the record directory, and the upstream's provenance."""

    def __init__(self, options: RecordOnMiss, matcher: Matcher):
        self.options = options
        self.matcher = matcher
        self.session: aiohttp.ClientSession | None = None
        self._flights: dict[tuple, Flight] = {}
        self._tasks: dict[asyncio.Task, Flight] = {}
        self._info: ServerInfo | None = None
        self._writing = asyncio.Lock()
        self.budget = ReplyBudget(options.reply_budget)

    async def session_context(self, app: web.Application):
        """cleanup_ctx: the upstream session lives as long as the app; flights end with it."""
        async with open_session(self.options.upstream) as session:
            self.session = session
            yield
            await self._finish_in_flight(self.options.shutdown_grace)
        self.session = None

    async def on_shutdown(self, app: web.Application) -> None:
        """on_shutdown, which aiohttp runs before it waits for the handlers: a client waiting on a
        stalled upstream is answered once its flight is abandoned, so nothing waits longer."""
        await self._finish_in_flight(self.options.shutdown_grace)

    async def _finish_in_flight(self, seconds: float) -> None:
        """At shutdown, let the recordings in the air finish (often a twin, fetched after the
        client had its reply): a test session that ends right after its last request must still
        find that request recorded when it runs offline. What still waits on the upstream after
        ``seconds`` is abandoned, unwritten; a recording being written is let finish."""
        if not self._tasks:
            return
        log.warning(
            "mockllama: finishing %d recording(s) in progress before stopping (up to %g s)", len(self._tasks), seconds
        )
        _, late = await asyncio.wait(set(self._tasks), timeout=seconds)
        abandoned = [task for task in late if not getattr(self._tasks.get(task), "writing", False)]
        for task in abandoned:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        if abandoned:
            log.warning(
                "mockllama: %d recording(s) did not finish within %g s of stopping (the upstream had not "
                "answered); they were abandoned and nothing of them was written",
                len(abandoned),
                seconds,
            )

    @property
    def in_flight(self) -> int:
        """How many upstream exchanges are still running (recordings not yet written)."""
        return len(self._tasks)

    def flight_for(self, sent: Sent) -> Flight:
        """The flight already carrying this request, or a new one. The caller calls ``leave()``
        when done with it."""
        key = sent.key()
        flight = self._flights.get(key)
        if flight is None:
            flight = Flight(self.target_name(sent), sent, Spool(self.options.spool_threshold))
            self._flights[key] = flight
            task = asyncio.get_running_loop().create_task(self._fly(flight))
            self._tasks[task] = flight
            task.add_done_callback(lambda done: (self._tasks.pop(done, None), self._flights.pop(key, None)))
        flight.clients += 1
        return flight

    def target_name(self, sent: Sent) -> str:
        """The scenario to record into: the X-Mockllama-Scenario header's, else a slug. Only the
        record directory's own NAME.yaml is ever recorded into: a name another loaded cassette
        holds is refused when a client chose it, and passed over (``-2``, ``-3``...) when it is a
        slug, so that the next start never finds one name twice."""
        if sent.scenario_header is None:
            slug = name = slug_name(sent)
            number = 1
            while not self._ours(name):
                number += 1
                name = f"{slug}-{number}"
            return name
        name = sent.scenario_header.strip()
        if not NAME.fullmatch(name):
            raise RequestError(
                400,
                f"mockllama: cannot record into the scenario {name!r} (from X-Mockllama-Scenario): "
                "a name is a file name of letters, digits, '.', '_' and '-'.",
            )
        if name in bundled_names() and not self._ours(name):
            raise RequestError(
                400,
                f"mockllama: cannot record into the scenario {name!r} (from X-Mockllama-Scenario): a bundled "
                "recording has that name, and the pytest plugin serves the bundled recordings beside the "
                "record directory, where one name may appear once. Choose another name to record this request.",
            )
        if not self._ours(name):
            raise RequestError(
                400,
                f"mockllama: the scenario {name!r} (from X-Mockllama-Scenario) comes from "
                f"{self.matcher.scenarios[name].source}, not from the record directory's "
                f"{self._file(name)}, and is never recorded over. Choose another name to "
                "record this request.",
            )
        return name

    def _file(self, name: str) -> Path:
        return self.options.record_to / f"{name}.yaml"

    def _ours(self, name: str) -> bool:
        """Whether recording into NAME.yaml leaves every loaded name once: no scenario has it yet
        (nor a bundled one, which the pytest plugin loads beside it), or the one that has it is
        that very file."""
        owner = self.matcher.scenarios.get(name)
        if owner is None:
            return name not in bundled_names()
        return owner.source.resolve() == self._file(name).resolve()

    async def _fly(self, flight: Flight) -> None:
        upstream = self.options.upstream
        exchanges: list[Exchange] = []
        try:
            sent = flight.sent
            info = await self._server_info(sent.headers)
            exchanges.append(await self._exchange(flight, sent.method, sent.path, sent.raw, flight.spool))
            twin = self._twin(sent, exchanges[0].status)
            if twin is not None:
                twin_spool = Spool(self.options.spool_threshold)
                exchanges.append(await self._exchange(flight, "POST", CHAT_PATH, twin, twin_spool))
            flight.recorded.set_result(await self._record(flight, exchanges, info))
        except RequestError as err:
            flight.fail(err)
        except UPSTREAM_ERRORS as err:
            flight.fail(unreachable(upstream, err))
        except asyncio.CancelledError:
            if not flight.recorded.done():
                flight.fail(RequestError(503, "mockllama: the server is shutting down; nothing was recorded."))
            raise
        except Exception:
            log.exception("mockllama: recording %r failed", flight.name)
            flight.fail(
                RequestError(
                    500,
                    f"mockllama: internal error while recording {flight.name!r}; "
                    "nothing was recorded. The server log has the details.",
                )
            )
        finally:
            self.budget.give(flight.held)
            flight.held = 0
            for exchange in exchanges[1:]:
                exchange.spool.close()
            flight.land()
        if flight.error is not None:
            log.warning("%s", flight.error.message)

    async def _record(self, flight: Flight, exchanges: list[Exchange], info: ServerInfo) -> Interaction:
        """Write the recording in a thread, so that every other client is answered meanwhile, and
        one write at a time: each reads the cassette and provenance.json the one before wrote,
        and only one reply is read back into memory from its spool at a time."""
        async with self._writing:
            flight.writing = True
            writing = asyncio.ensure_future(asyncio.to_thread(self._write, flight, exchanges, info))
            try:
                scenario, index = await asyncio.shield(writing)
            except asyncio.CancelledError:
                # A write cannot be stopped halfway, and is this machine's work, bounded: let it
                # end, so that what is served and logged is what the directory holds.
                with contextlib.suppress(Exception):
                    scenario, index = await writing
                    self.matcher.add(scenario)
                    flight.recorded.set_result(scenario.interactions[index])
                raise
            self.matcher.add(scenario)
        return scenario.interactions[index]

    async def _server_info(self, client_headers) -> ServerInfo:
        """The upstream's /props and /v1/models, read once: provenance, and proof it is llama-server."""
        if self._info is None:
            upstream = self.options.upstream
            headers = dict(forwarded_headers(client_headers, upstream))
            try:
                self._info = await probe(upstream.url, upstream.timeout, headers)
            except RecordError as err:
                raise RequestError(
                    502, f"mockllama: the upstream cannot be recorded from: {err}; nothing was recorded."
                ) from None
        return self._info

    def _twin(self, sent: Sent, status: int) -> bytes | None:
        """The chat twin of a Responses request that was answered, as ``record`` derives it."""
        body = sent.body
        if sent.path != RESPONSES_PATH or status != 200 or not isinstance(body, dict):
            return None
        try:
            twin = chat_twin(body)
            try:
                text = PlannedRequest("POST", CHAT_PATH, json=twin).body_text()
                assert text is not None  # a JSON body has its text
                return text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate from the request: \u escapes are valid JSON
                return json.dumps(twin).encode("ascii")
        except (KeyError, TypeError, AttributeError, ValueError):
            log.warning("mockllama: no chat twin for %r: its input cannot be converted", sent.path)
            return None

    async def _exchange(self, flight: Flight, method: str, path: str, raw: bytes, spool: Spool) -> Exchange:
        """One upstream request for ``flight``, its reply read into ``spool``. The flight's own
        request (``spool`` is the flight's) is handed on as it arrives: the head first, then each
        SSE block, or each part of a body. Else it is the chat twin, mockllama's own JSON."""
        upstream = self.options.upstream
        own = spool is flight.spool
        headers = forwarded_headers(flight.sent.headers, upstream)
        if not own:
            headers["Content-Type"] = "application/json"
        query = f"?{flight.sent.query}" if own and flight.sent.query else ""
        target = URL(upstream.url + path + query, encoded=True)  # the client's query, not re-encoded
        assert self.session is not None  # open while the app runs (session_context)
        async with self.session.request(
            method, target, data=raw or None, headers=headers, allow_redirects=False
        ) as response:
            if response.status < 200:
                raise self._interim(response)
            stream = response.content_type == "text/event-stream"
            if own:
                flight.head.set_result(
                    Head(response.status, response.reason or "", tuple(response.headers.items()), stream)
                )
            await self._read_into(spool, response, flight, framed=own and stream)
            if own:
                flight.finish()
            recorded_headers = {name: str(headers[name]) for name in RECORDED_REQUEST_HEADERS if name in headers}
            reply_headers = {
                str(name): response.headers.getall(name) for name in dict.fromkeys(response.headers.keys())
            }
        from vcr.request import Request as VcrRequest  # not at the top: see cassettes.read_cassette

        request = VcrRequest(method, upstream.url + path, raw or None, recorded_headers)
        return Exchange(request, response.status, response.reason or "", reply_headers, spool)

    def _interim(self, response: aiohttp.ClientResponse) -> RequestError:
        """A 1xx where the final reply was due: mockllama never asks to switch protocols (RFC 9110
        section 15.2), so it is no reply of llama-server's, and a replay of it would never end."""
        response.close()
        return RequestError(
            502,
            f"mockllama: the upstream llama-server at {self.options.upstream.url} answered "
            f"{response.method} {response.url.path} with {response.status} {printable(response.reason or '')}, "
            "an interim reply where the final one was due (no client asked it to switch protocols); "
            "mockllama closed the connection and nothing was recorded.",
        )

    def _too_large(self, response: aiohttp.ClientResponse) -> RequestError:
        """Stop reading a reply over the cap: it is never recorded, nor held any longer."""
        response.close()
        cap = self.options.max_reply_bytes
        return RequestError(
            502,
            f"mockllama: the upstream llama-server at {self.options.upstream.url} answered "
            f"{response.method} {response.url.path} with more than {cap} bytes; mockllama "
            "stopped reading it and nothing was recorded. Raise serve --max-reply-bytes if "
            "that is really wanted.",
        )

    def _over_budget(self, response: aiohttp.ClientResponse) -> RequestError:
        """Stop reading a reply the shared budget has no room for: nothing of it is recorded."""
        response.close()
        budget = self.budget
        return RequestError(
            503,
            f"mockllama: the upstream replies being recorded already hold {budget.held} bytes, and the "
            f"reply to {response.method} {response.url.path} would take them past the {budget.limit} "
            "bytes that all replies in flight may hold between them; mockllama stopped reading it and "
            "nothing was recorded. Retry once the recordings in progress are written.",
        )

    def _check_length(self, response: aiohttp.ClientResponse) -> None:
        """A Content-Length over the cap or the budget stops the reply before any of it is read."""
        length = response.content_length
        if length is not None:
            if length > self.options.max_reply_bytes:
                raise self._too_large(response)
            if not self.budget.fits(length):
                raise self._over_budget(response)

    def _hold(self, response: aiohttp.ClientResponse, flight: Flight, counted: int, cost: int) -> int:
        """``cost`` more bytes held for the reply, which has ``counted`` so far: within the cap, and
        taken from the budget for replies in flight. The new count."""
        counted += cost
        if counted > self.options.max_reply_bytes:
            raise self._too_large(response)
        if not self.budget.take(cost):
            raise self._over_budget(response)
        flight.held += cost
        return counted

    async def _read_into(self, spool: Spool, response: aiohttp.ClientResponse, flight: Flight, framed: bool) -> None:
        """The reply into ``spool``: each part as it comes, or (``framed``) each whole SSE block.
        What it holds is counted as it arrives, before it is framed, and each block's offset in the
        spool (``spool.BLOCK_BYTES``) too, so that tiny blocks cannot hold more than the cap."""
        self._check_length(response)
        counted, pending = 0, bytearray()
        async for chunk in response.content.iter_any():
            counted = self._hold(response, flight, counted, len(chunk))
            if not framed:
                counted = self._keep(spool, [chunk], flight, response, counted)
                continue
            pending += chunk
            blocks, end = [], block_end(pending)
            while end >= 0:  # whole SSE blocks, as they arrive
                blocks.append(bytes(pending[:end]))
                del pending[:end]
                end = block_end(pending)
            if blocks:
                counted = self._keep(spool, blocks, flight, response, counted)
        if pending:
            self._keep(spool, [bytes(pending)], flight, response, counted)

    def _keep(
        self, spool: Spool, blocks: list[bytes], flight: Flight, response: aiohttp.ClientResponse, counted: int
    ) -> int:
        """``blocks`` into ``spool``, their offsets counted: the new count."""
        counted = self._hold(response, flight, counted, BLOCK_BYTES * len(blocks))
        try:
            spool.extend(blocks)
        except OSError as err:  # a full or unwritable TMPDIR: this machine's fault, not the upstream's
            raise RequestError(
                500,
                f"mockllama: the upstream llama-server at {self.options.upstream.url} is answering "
                f"{flight.sent.method} {flight.sent.path}, but mockllama could not hold its reply in a "
                f"temporary file: {printable(os_error(err))}. The fault is on this machine: check that "
                "TMPDIR is writable and has space left. Nothing was recorded.",
            ) from None
        if spool is flight.spool:
            flight.more()
        return counted

    def _write(self, flight: Flight, exchanges: list[Exchange], info: ServerInfo) -> tuple[Scenario, int]:
        """Merge into NAME.yaml (an interaction with the same method, path, stream flag and turn is
        replaced) and write it as ``record`` does: the scenario to serve from now on, and where the
        flight's own request is in it. Run in a thread, one at a time (``_record``): it touches
        nothing but files and what it is given.

        What is written is first read back from its temporary file by the loader ``serve`` uses;
        only a cassette that loads is renamed into place, so no upstream reply can leave the
        record directory unloadable, nor spoil a good recording it would have joined."""
        directory = self.options.record_to
        path = directory / f"{flight.name}.yaml"
        problem = unrecordable(exchanges)
        if problem:
            raise self._not_recorded(flight, problem)
        kept = []
        if path.is_file():
            try:
                requests, responses = read_cassette(path)
            except CassetteError as err:
                raise self._not_written(
                    flight, path, f"the existing {path.name} cannot be read ({err.reason})"
                ) from None
            replaced = {_vcr_key(exchange.request) for exchange in exchanges}
            kept = [(q, r) for q, r in zip(requests, responses) if _vcr_key(q) not in replaced]
        try:
            directory.mkdir(parents=True, exist_ok=True)
            # Each reply is read back from its spool as save_cassette takes it, and kept nowhere
            # else: once written, its bytes are gone before the check loads the cassette back.
            pairs = itertools.chain(kept, (exchange.pair() for exchange in exchanges))
            scenario = save_cassette(path, pairs, check=lambda written: _loaded_as(written, flight.name, path))
        except CassetteError as err:
            raise self._not_recorded(flight, err.reason) from None
        except OSError as err:  # this machine's file system, never the upstream's doing
            raise self._not_written(flight, path, os_error(err)) from None
        interaction = scenario.interactions[len(kept)]  # the flight's own request; its twin follows
        log.info("mockllama: recorded %s into %s", interaction.describe(), path)
        try:
            write_provenance(
                directory,
                self.options.upstream.url,
                info,
                [Outcome(scenario.name, summary(scenario, interaction))],
                None,
                None,
                recorded_by="mockllama serve --upstream, on a miss",
            )
        except OSError as err:  # the recording is written and served: say so, and what is missing
            log.warning(
                "mockllama: recorded %s into %s, but could not update %s: %s. The recording is kept "
                "and served; only its provenance is missing.",
                interaction.describe(),
                path,
                directory / PROVENANCE_FILE,
                os_error(err),
            )
        return scenario, len(kept)

    def _not_written(self, flight: Flight, path: Path, reason: str) -> RequestError:
        """A recording this machine could not write: a 500, as nginx answers its own failures; the
        upstream answered, so a 502 would send the user to look in the wrong place."""
        sent = flight.sent
        return RequestError(
            500,
            f"mockllama: the upstream llama-server at {self.options.upstream.url} answered "
            f"{sent.method} {sent.path} (stream={str(sent.stream).lower()}), but mockllama could not "
            f"write its recording to {printable(str(path))}: {printable(reason)}. The fault is on this "
            f"machine, not the upstream's: check that {printable(str(path.parent))} is a writable "
            "directory with space left. Nothing was recorded; the record directory is as it was.",
        )

    def _not_recorded(self, flight: Flight, reason: str) -> RequestError:
        sent = flight.sent
        return RequestError(
            502,
            f"mockllama: the reply of the upstream llama-server at {self.options.upstream.url} "
            f"to {sent.method} {sent.path} (stream={str(sent.stream).lower()}) was not recorded, "
            f"because a recording of it could not be served: {printable(reason)}. Nothing was "
            "written; the record directory is as it was.",
        )


def os_error(err: OSError) -> str:
    """``EACCES (Permission denied) on /path``: the errno by name, as a user looks it up."""
    name = errno.errorcode.get(err.errno, f"errno {err.errno}") if err.errno else type(err).__name__
    where = f" on {err.filename}" if err.filename else ""
    where += f" -> {err.filename2}" if err.filename2 else ""  # a rename names both
    return f"{name} ({err.strerror or err}){where}"


def unrecordable(exchanges: list[Exchange]) -> str | None:
    """Why these replies must not be recorded, beyond what loading the cassette checks."""
    for exchange in exchanges:
        for name, values in exchange.headers.items():
            encodings = {value.strip().lower() for value in values} - {"", "identity"}
            if name.lower() == "content-encoding" and encodings:
                return (
                    f"it came with Content-Encoding {', '.join(sorted(encodings))} although mockllama asked "
                    "for identity, and recordings are kept as plain text"
                )
    return None


def _loaded_as(written: Path, name: str, final: Path) -> Scenario:
    """The temporary cassette ``written``, loaded as ``serve`` will load it once it is ``final``."""
    loaded = load_cassette(written)
    return Scenario(name, final, [dataclasses.replace(each, scenario=name) for each in loaded.interactions])
