"""Send an unpaced stream's head and blocks in as few writes and TCP segments as they fit in, each
block still its own HTTP chunk.

Unpaced, a stream's blocks are written one after another as fast as they can be. Written one by
one, 49 blocks cost 49 passes through aiohttp's writer and 49 socket sends, one TCP segment each
(aiohttp turns Nagle off): the benchmark showed mockllama's streams at half aimock's throughput
(Node.js hands back-to-back writes to one writev). So, with the socket corked (Linux's TCP_CORK
holds partial segments until it is uncorked), aiohttp sends the head and the first block, and
the rest are framed here, one chunk per block exactly as aiohttp frames them, and handed to the
transport in one write. The terminating chunk follows when the handler returns, after the
journal has its entry (server.write_reply), so it is its own segment. The bytes on the wire are
the same, block for block. A paced stream never comes here: each block leaves at its time.
"""

from __future__ import annotations

import socket
from contextlib import contextmanager

from aiohttp import web
from aiohttp.http import HttpVersion11

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


def chunked(blocks: list[bytes]) -> bytes:
    """``blocks`` in HTTP/1.1 chunked framing, one chunk each (RFC 9112 section 7.1)."""
    return b"".join(b"%x\r\n%s\r\n" % (len(block), block) for block in blocks)


async def send_at_once(request: web.Request, response: web.StreamResponse, blocks: list[bytes]) -> None:
    """Prepare ``response`` and write every block as its own chunk, in as few writes as aiohttp allows."""
    if request.version == HttpVersion11:
        response.enable_chunked_encoding()  # the framing is ours to write only if it is chunked for sure
    with corked(request):
        writer = await response.prepare(request)  # StreamResponse sends its head here: inside the cork
        if not blocks:
            return
        await response.write(blocks[0])
        if len(blocks) == 1:
            return
        if not response.chunked:  # HTTP/1.0: no chunks, the body ends with the connection
            for block in blocks[1:]:
                await response.write(block)
            return
        transport = request.transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("the client went away during the stream")
        framed = chunked(blocks[1:])
        transport.write(framed)
        writer.output_size += len(framed)  # what aiohttp counts as sent: the access log's %b
        await writer.drain()  # a long recording to a slow reader waits here, as response.write would
