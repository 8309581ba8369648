"""The writer: a reply onto the wire as the outgoing steps left it (``server.outgoing.Outgoing``): a
plain body whole, a stream's blocks at once (corked), or each block after its wait. It tells the
journal's trace what went out."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from multidict import CIMultiDictProxy

from mockllama.behaviours.reply import Reply
from mockllama.server.corking import send_at_once
from mockllama.server.journal import Trace
from mockllama.server.outgoing import Outgoing
from mockllama.server.stopping import STOPPING, Stopping, shutting_down

log = logging.getLogger("mockllama")


def plain_reply(reply: Reply, headers: CIMultiDictProxy) -> web.Response:
    """A reply that is not a stream, to send at once: built without a coroutine of its own, for the
    JSON replies that no outgoing step changes."""
    return web.Response(status=reply.status, reason=reply.reason, body=reply.body, headers=headers)


async def send(request: web.Request, trace: Trace, outgoing: Outgoing) -> web.StreamResponse:
    """Send ``outgoing``. The journal learns the bytes sent and whether the whole reply went out.
    A wait that the server's stop ends (``server.stopping``) ends the reply: a 503 before its head,
    a cut connection after it."""
    stopping = request.app[STOPPING]
    if outgoing.before and not await stopping.wait(outgoing.before):
        raise shutting_down()
    if not outgoing.stream and outgoing.waits is None and not outgoing.drop:
        # A plain body goes out as aiohttp sends a Response, after the handler returns, so that the
        # journal has the entry before the client has the reply.
        body = b"".join(outgoing.blocks)
        trace.bytes_sent, trace.finished = len(body), outgoing.finished
        return web.Response(status=outgoing.status, reason=outgoing.reason, body=body, headers=outgoing.headers)
    response = web.StreamResponse(status=outgoing.status, reason=outgoing.reason, headers=outgoing.headers)
    if not outgoing.stream:
        # A plain body keeps a Content-Length: the full one when the connection is to be dropped,
        # so that the client can tell the body is short; else the length of what is sent.
        response.content_length = outgoing.whole_size if outgoing.drop else sum(map(len, outgoing.blocks))
    trace.bytes_sent, trace.finished = 0, False
    whole = True  # every block went out: unless the server's stop ended a wait
    try:
        if outgoing.stream and outgoing.waits is None:
            await send_at_once(request, response, outgoing.blocks)
            trace.bytes_sent = sum(map(len, outgoing.blocks))
        else:
            await response.prepare(request)
            whole = await _write_in_time(response, outgoing.blocks, outgoing.waits or (), trace, stopping)
            if not whole:
                log.info("mockllama: cut a reply on %s short: the server is stopping", request.path)
        if outgoing.drop or not whole:
            trace.drop_connection = True  # the journal's wrapper closes it, once the entry is written
            return response
        # aiohttp ends the reply once the handler returns: after the journal has its entry, so a
        # client can never see the end of a reply before the journal does.
        trace.finished = outgoing.finished
    except ConnectionResetError:
        log.debug("mockllama: client went away during a reply on %s", request.path)
    return response


async def _write_in_time(
    response: web.StreamResponse,
    blocks: list[bytes],
    waits: list[float] | tuple[()],
    trace: Trace,
    stopping: Stopping,
) -> bool:
    """Each block after its wait; whether every block went out (False: the server's stop ended a
    wait). The waits run against deadlines, so that small oversleeps do not add up."""
    loop = asyncio.get_running_loop()
    due = loop.time()
    for index, block in enumerate(blocks):
        due += waits[index] if index < len(waits) else 0.0
        if due > loop.time() and not await stopping.wait(due - loop.time()):
            return False
        await response.write(block)  # one block per chunk, sent as it is written
        trace.bytes_sent = (trace.bytes_sent or 0) + len(block)
    return True
