"""The floor: a bare aiohttp application that sends the two workloads' recorded replies from memory,
and the same replies from aiohttp's low-level server. ``python -m benchmarks.floor PORT
[--low-level]`` serves one until SIGINT or SIGTERM; the bench starts both (harness.floor_command)."""

from __future__ import annotations

import asyncio
import signal
import sys

from aiohttp import web
from multidict import CIMultiDict

from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios
from mockllama.server.app import reply_headers
from mockllama.server.corking import send_at_once
from mockllama.server.cors import ALLOW_ORIGIN
from mockllama.wire.routes import RESPONSES_PATH


def run_floor(port: int, low_level: bool = False) -> None:
    """Serve the two workloads' recorded replies with no matching and no transform at all, in the
    fastest way aiohttp allows: a plain body whole, a stream's blocks each its own chunk, all
    handed to the socket at once (server.corking, as mockllama does), so no server sending the
    same bytes can beat it by writing them better. The same bytes, head included: the headers
    mockllama ``buggy`` sends with them (the recorded ones, its own X-Mockllama-* and the CORS
    origin), built once, so that "x the floor" counts mockllama's work, not its headers.

    The floor is a ``web.Application`` with one route, as mockllama is one with many: the ratio
    to it is what mockllama does beyond aiohttp's application layer. ``low_level`` serves the same
    handler from aiohttp's low-level ``web.Server`` instead, with no router, no middleware chain
    and no response signal: the least any aiohttp server does to send these bytes (LOW_LEVEL in
    the tables), so the most any server built on aiohttp can show against a peer."""
    scenarios = load_scenarios([bundled_cassette_dir()])
    plain = scenarios["text-cut-8"].find("POST", RESPONSES_PATH, False)
    streamed = scenarios["poem-finishes"].find("POST", RESPONSES_PATH, True)
    blocks = [event.raw for event in streamed.events]

    def head(interaction) -> CIMultiDict:
        headers = CIMultiDict(reply_headers(interaction.headers, None, "buggy", interaction.scenario, "match", 1))
        headers[ALLOW_ORIGIN] = ""  # as the CORS hook sets it for a request without Origin
        return headers

    plain_head, stream_head = head(plain), head(streamed)

    async def responses(request: web.BaseRequest) -> web.StreamResponse:
        body = await request.read()
        if b'"stream": true' not in body:
            return web.Response(body=plain.body, headers=plain_head)
        response = web.StreamResponse(headers=stream_head)
        await send_at_once(request, response, blocks)
        return response

    if low_level:
        return _serve_low_level(port, responses)
    app = web.Application()
    app.router.add_post(RESPONSES_PATH, responses)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def _serve_low_level(port: int, responses) -> None:
    """``responses`` on aiohttp's low-level server until SIGINT or SIGTERM (web.run_app takes only
    an Application); any other method or path gets a bare 404, as the floor's router gives."""

    async def any_request(request: web.BaseRequest) -> web.StreamResponse:
        if request.method == "POST" and request.path == RESPONSES_PATH:
            return await responses(request)
        return web.Response(status=404)

    async def serve() -> None:
        runner = web.ServerRunner(web.Server(any_request, access_log=None))  # the runner passes on no options
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        stop = asyncio.Event()
        for signal_number in (signal.SIGINT, signal.SIGTERM):  # a clean exit: callgrind writes its counts
            asyncio.get_running_loop().add_signal_handler(signal_number, stop.set)
        await stop.wait()
        await runner.cleanup()

    asyncio.run(serve())


if __name__ == "__main__":
    run_floor(int(sys.argv[1]), low_level=sys.argv[2:] == ["--low-level"])
