"""Send an unpaced stream's blocks in as few TCP segments as they fit in, each block still its own chunk.

Unpaced, a stream's blocks are written one after another as fast as they can be. Sent one TCP
segment each (aiohttp turns Nagle off), 49 blocks cost 49 trips through the kernel's transmit
path, and the benchmark showed mockllama's streams at half aimock's throughput (Node.js hands
back-to-back writes to one writev). Linux's TCP_CORK holds the segments until the stream's last
block is written, then sends them together: twice the throughput, half the p50. Every block is
still written on its own, so the HTTP chunked framing, which clients read block by block, is
unchanged; the bytes are the same. A paced stream is never corked: each block leaves at its time.
"""

from __future__ import annotations

import socket
from contextlib import contextmanager

from aiohttp import web

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
