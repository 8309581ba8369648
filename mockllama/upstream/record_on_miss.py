"""Recording on a miss: forward the request to the upstream llama-server, record it, serve it at once.

One upstream exchange is a *flight* (``upstream.flight``). Clients that miss with the same request
at the same time share one flight: one upstream generation, one recording. A flight runs as its
own task, so a client that goes away does not cut the recording short. It records into the
scenario ``upstream.scenario_names`` names.

What a flight does, in order:
1. reads the upstream's ``/props`` and ``/v1/models`` the first time (provenance, as ``record``;
   ``upstream.server_info``);
2. forwards the request and hands the reply on as it arrives, block by block for a stream,
   holding it in a ``Spool`` (in memory while small, then in a temporary file) and within the
   byte budget that all replies in flight share (``upstream.forwarding``);
3. for a ``/v1/responses`` request answered 200, fetches its chat twin, the same conversion
   ``mockllama record`` uses, with the same stream flag. The twin is sent only once the first
   reply is complete: a client following the stream never shares the upstream with it;
4. in a thread, one at a time, writes the cassette the way ``record`` does (scrubbed,
   atomically; ``record.save_cassette``), loads it from its temporary file with the loader
   ``serve`` uses, and only then renames it into place and updates ``provenance.json``
   (``upstream.cassette_writer``); back on the event loop, adds it to the live matcher.
Nothing is written unless every step succeeded, and nothing that would not load: a reply that
cannot be recorded reaches a waiting client as a 502 that says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from aiohttp import web

from mockllama.matching.matcher import Matcher
from mockllama.recordings.cassettes import Interaction
from mockllama.recordings.record import ServerInfo
from mockllama.upstream.cassette_writer import write_recording
from mockllama.upstream.client import UPSTREAM_ERRORS, Upstream, open_session, parse_upstream, unreachable
from mockllama.upstream.flight import Exchange, Flight, Sent
from mockllama.upstream.forwarding import Forwarder, twin_request
from mockllama.upstream.options import SHUTDOWN_GRACE, RecordingOptions, record_dir
from mockllama.upstream.record_mode import RecordMode
from mockllama.upstream.scenario_names import target_name
from mockllama.upstream.server_info import UpstreamInfo
from mockllama.upstream.spool import DEFAULT_REPLY_BUDGET, SPOOL_THRESHOLD, ReplyBudget, Spool
from mockllama.wire.errors import RequestError
from mockllama.wire.routes import CHAT_PATH
from mockllama.wire.sizes import DEFAULT_MAX_REPLY_BYTES

log = logging.getLogger("mockllama")


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
        self._writing = asyncio.Lock()
        self.budget = ReplyBudget(options.reply_budget)
        self.server_info = UpstreamInfo(options.upstream)
        self.forwarder = Forwarder(options.upstream, options.max_reply_bytes, self.budget)

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
        """The scenario to record into (``scenario_names.target_name``)."""
        return target_name(sent, self.matcher, self.options.record_to)

    async def _fly(self, flight: Flight) -> None:
        upstream = self.options.upstream
        exchanges: list[Exchange] = []
        try:
            sent = flight.sent
            info = await self.server_info.read(sent.headers)
            exchanges.append(
                await self.forwarder.exchange(self.session, flight, sent.method, sent.path, sent.raw, flight.spool)
            )
            twin = twin_request(sent, exchanges[0].status)
            if twin is not None:
                twin_spool = Spool(self.options.spool_threshold)
                exchanges.append(
                    await self.forwarder.exchange(self.session, flight, "POST", CHAT_PATH, twin, twin_spool)
                )
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
            writing = asyncio.ensure_future(
                asyncio.to_thread(
                    write_recording, flight, exchanges, info, self.options.record_to, self.options.upstream.url
                )
            )
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
