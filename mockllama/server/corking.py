"""Send an unpaced stream's head and blocks in as few writes and TCP segments as they fit in, each
block still its own HTTP chunk.

Unpaced, a stream's blocks are written one after another as fast as they can be. Written one by
one, each block is a pass through aiohttp's writer and a socket send of its own, one TCP segment
each (aiohttp turns Nagle off). So, with the socket corked (Linux's TCP_CORK holds partial
segments until it is uncorked), aiohttp sends the head and the first block, and the rest go to
the transport in one write, one chunk per block exactly as aiohttp frames them
(``server.aiohttp_private.write_chunks``). The terminating chunk follows when the handler
returns, after the journal has its entry (``server.writer.send``), so it is its own segment. The
bytes on the wire are the same, block for block. A paced stream never comes here: each block
leaves at its time.
"""

from __future__ import annotations

import socket
from contextlib import contextmanager

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http import HttpVersion11

from mockllama.server.aiohttp_private import write_chunks

_CORK = getattr(socket, "TCP_CORK", None)  # Linux only; elsewhere the blocks go out one by one


def _set_cork(sock, on: bool) -> None:
    try:
        sock.setsockopt(socket.IPPROTO_TCP, _CORK, 1 if on else 0)
    except OSError:
        pass  # the client has gone, or the socket is not TCP: nothing to hold back


@contextmanager
def corked(request: web.Request):
    """While inside, the request's TCP socket holds back partial segments; on leaving, they are sent."""
    transport = request.transport
    sock = transport.get_extra_info("socket") if transport is not None and _CORK is not None else None
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        yield
        return
    _set_cork(sock, True)
    try:
        yield
    finally:
        _set_cork(sock, False)


async def send_at_once(request: web.Request, response: web.StreamResponse, blocks: list[bytes]) -> None:
    """Prepare ``response`` and write every block as its own chunk, in as few writes as aiohttp allows."""
    if request.version == HttpVersion11:
        response.enable_chunked_encoding()  # the framing is ours to write only if it is chunked for sure
    with corked(request):
        writer = await response.prepare(request)  # StreamResponse sends its head here: inside the cork
        assert writer is not None  # None only for a response prepared and ended before
        await write_blocks(request, response, writer, blocks)


async def write_blocks(
    request: web.Request, response: web.StreamResponse, writer: AbstractStreamWriter, blocks: list[bytes]
) -> None:
    """Write ``blocks`` to a prepared ``response`` (``writer``: what its ``prepare`` gave), each its
    own chunk, in two writes however many there are: the first through aiohttp, which sends the
    head with it if it has not yet, the rest to the transport in one. A reply that is not chunked
    (a length, or HTTP/1.0) gets the rest joined, in one write too."""
    if not blocks:
        return
    await response.write(blocks[0])
    if len(blocks) == 1:
        return
    if not response.chunked:
        await response.write(b"".join(blocks[1:]))
        return
    await write_chunks(request, writer, blocks[1:])
