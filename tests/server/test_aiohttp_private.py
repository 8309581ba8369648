"""What mockllama.server.aiohttp_private relies on in aiohttp, beyond its public API: red when
aiohttp changes it (and then the module, and what it serves, need another way)."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web
from aiohttp.http import StreamWriter
from aiohttp.test_utils import TestClient, TestServer

from mockllama.server.aiohttp_private import chunked, reshape_prepared, write_chunks


def _exchange(hook) -> tuple[int, dict, bytes]:
    """(status, headers, body) of a plain 404 that ``hook`` (an on_response_prepare hook) changes."""

    async def not_found(request: web.Request) -> web.Response:
        return web.Response(status=404, text="404: Not Found")

    async def run():
        app = web.Application()
        app.router.add_get("/", not_found)
        app.on_response_prepare.append(hook)
        async with TestClient(TestServer(app)) as client:
            reply = await client.get("/")
            return reply.status, dict(reply.headers), await reply.read()

    return asyncio.run(run())


@pytest.mark.parametrize("body", [b"", b'{"error": {"code": 400, "message": "longer than the text it replaces"}}'])
def test_a_prepared_reply_goes_out_with_the_status_and_body_the_hook_gave_it(body):
    async def hook(request, response):
        reshape_prepared(response, 400, body)

    status, headers, sent = _exchange(hook)
    assert (status, sent, headers["Content-Length"]) == (400, body, str(len(body)))


def test_set_status_still_refuses_a_prepared_reply():
    """The reason reshape_prepared exists: once aiohttp takes set_status here, use it instead."""
    refused = []

    async def hook(request, response):
        try:
            response.set_status(400)
        except (AssertionError, RuntimeError) as err:
            refused.append(err)

    status, _, _ = _exchange(hook)
    assert refused and status == 404


class _Transport:
    def __init__(self):
        self.sent = []

    def write(self, data):
        self.sent.append(bytes(data))

    def writelines(self, data):
        self.sent.append(b"".join(data))

    def is_closing(self):
        return False


class _Protocol:
    """As much of aiohttp's protocol as its writer asks of it: never paused, so drain returns."""

    def __init__(self):
        self.transport = _Transport()
        self._paused = False


BLOCKS = [b"event: response.created\ndata: {}\n\n", b"", b"x" * 5000]


def _aiohttp_chunks(blocks: list[bytes]) -> tuple[bytes, int]:
    """What aiohttp's own writer sends for ``blocks`` written one at a time, chunked, and what it counts."""

    async def run():
        protocol = _Protocol()
        writer = StreamWriter(protocol, asyncio.get_running_loop())
        writer.enable_chunking()
        for block in blocks:
            await writer.write(block)
        return b"".join(protocol.transport.sent), writer.output_size

    return asyncio.run(run())


def test_write_chunks_frames_each_block_as_aiohttp_frames_a_chunk():
    sent, counted = _aiohttp_chunks([block for block in BLOCKS if block])  # aiohttp sends no empty chunk
    assert sent == chunked([block for block in BLOCKS if block]) and counted == len(sent)


def test_write_chunks_counts_what_it_sends_where_aiohttp_counts_it():
    class _Request:
        transport = _Transport()

    async def run():
        writer = StreamWriter(_Protocol(), asyncio.get_running_loop())
        writer.output_size = 100  # the head and the first block, as aiohttp counted them
        await write_chunks(_Request(), writer, BLOCKS[:1])
        return writer.output_size

    assert asyncio.run(run()) == 100 + len(chunked(BLOCKS[:1]))
    assert _Request.transport.sent == [chunked(BLOCKS[:1])]
