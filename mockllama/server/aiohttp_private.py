"""What mockllama does beyond aiohttp's public API, all of it here, each for a measured reason.

- ``reshape_prepared``: a request whose target is not a path (``CONNECT host:443``, ``OPTIONS *``)
  matches no route, not even the catch-all, so aiohttp answers it itself, with a 404 in plain
  text. Only a middleware would see that request before its reply, and a middleware costs every
  request a coroutine more; the app's ``on_response_prepare`` hook sees the reply, but aiohttp
  counts it as prepared by then, so ``set_status`` refuses it, and the body it will write is the
  one it holds when the hook returns.
- ``write_chunks``: an unpaced stream's blocks, each its own HTTP chunk, handed to the transport
  in one write (``server.corking`` says why), framed as aiohttp frames a chunk and counted where
  aiohttp counts what it sent. The public way, ``response.write`` a block at a time, passes each
  block through aiohttp's writer and makes a socket send of each.

tests/server/test_aiohttp_private.py goes red when aiohttp changes what these rely on.
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter


def reshape_prepared(response: web.Response, status: int, body: bytes) -> None:
    """Give ``response``, which aiohttp has prepared but not yet sent (in an ``on_response_prepare``
    hook), another status and body; its headers are the hook's to change."""
    response._set_status(status, None)  # set_status refuses a prepared reply
    response.body = body
    response.headers["Content-Length"] = str(len(body))  # aiohttp has already counted the old body


def chunked(blocks: list[bytes]) -> bytes:
    """``blocks`` in HTTP/1.1 chunked framing, one chunk each (RFC 9112 section 7.1), as aiohttp frames
    them; an empty block is left out, as aiohttp leaves out an empty write (framed, it would end the body)."""
    return b"".join(b"%x\r\n%s\r\n" % (len(block), block) for block in blocks if block)


async def write_chunks(request: web.Request, writer: AbstractStreamWriter, blocks: list[bytes]) -> None:
    """Write ``blocks`` as chunks of the chunked reply whose head ``writer`` (what ``prepare`` gave)
    has sent, in one write to the request's transport."""
    transport = request.transport
    if transport is None or transport.is_closing():
        raise ConnectionResetError("the client went away during the stream")
    framed = chunked(blocks)
    transport.write(framed)
    writer.output_size += len(framed)  # what aiohttp counts as sent: the access log's %b
    await writer.drain()  # a long recording to a slow reader waits here, as response.write would
