"""The route when an upstream is configured: replay a match, else forward, record and answer.

- ``buggy``, and every endpoint whose replay is the recording itself in every behaviour (chat
  completions, ``/v1/messages``, the GET routes), get the upstream's reply as it arrives: its
  status, its headers as a replay would send them, and each SSE block as soon as it is complete.
- ``fixed`` and ``spec`` on ``/v1/responses`` need the chat twin to decide the status, so they
  wait for the recording (request and twin) and are answered from it, as any later replay is.
- A request with a fault (``X-Mockllama-Fault``, or ``serve --fault`` for its scenario or ``*``)
  waits for the recording too, and the fault is applied to it by the same writer as on a hit. A
  bad fault header is refused before anything is forwarded, as a hit refuses it.
- A miss that a browser marks ``Sec-Fetch-Site: cross-site`` is refused (403) before anything is
  forwarded, unless ``--cors-origin`` names the page's origin: forwarding sends the URL's
  credentials and records the reply, which a page's ``<img>`` (a no-cors GET, no ``Origin``) must
  not make happen. A hit is replayed as llama-server would answer it.
"""

from __future__ import annotations

import logging

from aiohttp import HttpVersion11, web
from multidict import CIMultiDict

from mockllama.matching.matcher import Selection
from mockllama.server import cors
from mockllama.server.app import (
    SCENARIO_HEADER,
    SETTINGS,
    mockllama_headers,
    read_request,
    send_selection,
)
from mockllama.server.corking import write_blocks
from mockllama.server.faults import FAULT_HEADER, FAULT_PLAN
from mockllama.server.journal import trace_of
from mockllama.upstream.client import reply_headers
from mockllama.upstream.flight import Flight, Sent
from mockllama.upstream.record_mode import RecordMode, decide
from mockllama.upstream.record_on_miss import Recorder, RecordOnMiss
from mockllama.wire.errors import RequestError
from mockllama.wire.routes import RESPONSES_PATH

log = logging.getLogger("mockllama")

RECORDER = web.AppKey("recorder", Recorder)
SELECTED_BY_UPSTREAM = "upstream"


def install(app: web.Application, options: RecordOnMiss):
    """Give the app its recorder and its upstream session; return the API routes' handler, with
    what it needs of the app bound (the server journals it and answers its failures)."""
    settings = app[SETTINGS]
    if settings.matcher.fallback is not None and options.mode is not RecordMode.NONE:
        raise ValueError(
            f"--fallback answers every miss, so record mode {options.mode.value!r} would never record; "
            "use --fallback only with --record-mode none"
        )
    recorder = Recorder(options, settings.matcher)
    app[RECORDER] = recorder
    app.cleanup_ctx.append(recorder.session_context)
    app.on_shutdown.append(recorder.on_shutdown)
    faults = app[FAULT_PLAN]

    async def replay_or_record(request: web.Request) -> web.StreamResponse:
        behaviour, method, path, raw = await read_request(request, settings)
        scenario_header = request.headers.get(SCENARIO_HEADER)
        selection = decide(
            recorder.options.mode,
            lambda: settings.matcher.select(method, path, raw, scenario_header),
        )
        if selection is not None:
            return await send_selection(request, settings, faults, behaviour, selection, raw)
        cors.refuse_cross_site(request, "be forwarded to the upstream llama-server and recorded")
        faults.choose(request.headers.get(FAULT_HEADER), "")  # a bad header: the 400 a hit gets, before forwarding
        query = request.raw_path.partition("?")[2]  # as the client wrote it: decoding it would change it
        sent = Sent(method, path, query, raw, tuple(request.headers.items()), scenario_header)
        flight = recorder.flight_for(sent)
        try:
            faulted = faults.choose(request.headers.get(FAULT_HEADER), flight.name) is not None
            if _answers_live(behaviour, path) and not faulted:
                return await _forward(request, flight, behaviour)
            recorded = Selection(await flight.recorded, SELECTED_BY_UPSTREAM)
            return await send_selection(request, settings, faults, behaviour, recorded, raw)
        finally:
            flight.leave()

    return replay_or_record


def _answers_live(behaviour: str, path: str) -> bool:
    """Where the behaviour's reply is the recording itself, the upstream's bytes can go out as they come."""
    return behaviour == "buggy" or path != RESPONSES_PATH


async def _forward(request: web.Request, flight: Flight, behaviour: str) -> web.StreamResponse:
    head = await flight.head  # an upstream that is down or silent raises 502/504 here
    headers = CIMultiDict(reply_headers(CIMultiDict(head.headers)))
    headers.update(mockllama_headers(behaviour, flight.name))
    headers["X-Mockllama-Selected-By"] = SELECTED_BY_UPSTREAM
    response = web.StreamResponse(status=head.status, reason=head.reason, headers=headers)
    if not head.stream:
        # A body goes out whole, with its length, as a replay sends it: a failure before its end
        # is still an error reply. It is sent from the spool, never joined into one more copy.
        await flight.complete()
        response.content_length = flight.spool.size
    elif request.version == HttpVersion11:
        response.enable_chunked_encoding()  # each upstream block its own chunk, as llama-server sent it
    trace = trace_of(request)
    trace.bytes_sent, trace.finished = 0, False
    writer = await response.prepare(request)
    assert writer is not None  # None only for a response prepared and ended before
    try:
        # Each run of blocks that came while the client was being written to goes out in one go: a
        # stream of tiny blocks costs a write per wake, not per block (issue 55, item 4).
        async for blocks in flight.follow():
            await write_blocks(request, response, writer, blocks)
            trace.bytes_sent += sum(map(len, blocks))
    except RequestError as err:
        # The head is sent: the client can only see the stream stop, as it would from llama-server.
        log.warning("mockllama: the upstream stream broke off: %s", err.message)
        if request.transport is not None:  # None once the client has gone
            request.transport.close()
        return response
    except ConnectionResetError:
        log.debug("mockllama: client went away during a proxied stream on %s; the recording goes on", request.path)
        return response
    await response.write_eof()
    trace.finished = True
    return response
