"""The writer: a reply onto the wire, a plain body whole, a stream's blocks at once (corked), or
each block at its recorded time (``--pace``). It tells the journal's trace what went out."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from multidict import CIMultiDictProxy

from mockllama.behaviours.reply import Reply
from mockllama.server.corking import send_at_once
from mockllama.server.journal import Trace

log = logging.getLogger("mockllama")


def plain_reply(reply: Reply, headers: CIMultiDictProxy) -> web.Response:
    """A reply that is not a stream, to send at once: built without a coroutine of its own (the
    JSON hot path; write_reply's cost 1.5% of such a reply)."""
    return web.Response(status=reply.status, reason=reply.reason, body=reply.body, headers=headers)


async def write_reply(
    request: web.Request, trace: Trace, reply: Reply, headers: CIMultiDictProxy, delays: list[float] | None
) -> web.StreamResponse:
    """``delays``: seconds to wait before each block (one for a plain body), or None to send at once."""
    if reply.events is None:
        if delays:
            await asyncio.sleep(delays[0])
        return plain_reply(reply, headers)
    response = web.StreamResponse(status=reply.status, reason=reply.reason, headers=headers)
    trace.bytes_sent, trace.finished = 0, False
    try:
        if delays is not None:
            await response.prepare(request)
            await _write_paced(response, reply.events, delays, trace)
        else:
            blocks = [event.raw for event in reply.events]
            await send_at_once(request, response, blocks)
            trace.bytes_sent = sum(map(len, blocks))
        # aiohttp ends the stream once the handler returns: after the journal has its entry, so
        # a client can never see the end of a stream before the journal does.
        trace.finished = True
    except ConnectionResetError:
        log.debug("mockllama: client went away during a stream on %s", request.path)
    return response


async def _write_paced(response: web.StreamResponse, events: list, delays: list[float], trace: Trace) -> None:
    loop = asyncio.get_running_loop()
    due = loop.time()  # waits run against deadlines, so the small oversleeps do not add up
    for event, delay in zip(events, delays):
        due += delay
        if due > loop.time():
            await asyncio.sleep(due - loop.time())
        await response.write(event.raw)  # one recorded block per chunk, sent as it is written
        trace.bytes_sent += len(event.raw)
