"""Test doubles of llama-server b11434 as the upstream of ``serve --upstream``: mockllama replaying
the bundled real recordings (so /health, /props, /v1/models and every reply not replaced are
llama-server's own bytes), with the replies a test needs replaced."""

from __future__ import annotations

import asyncio
import json
import threading

from aiohttp import web

from mockllama.app import create_app
from support.recordings import SCENARIOS


def llama_server_with(replace) -> web.Application:
    """A test double of llama-server b11434: mockllama replaying its real recordings, except that
    ``await replace(request, body)`` may answer a POST itself (return a response) or let the
    recording answer (return None). ``body`` is the request's JSON, or None."""

    @web.middleware
    async def replaced(request, handler):
        if request.method == "POST":
            raw = await request.read()
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            answer = await replace(request, body)
            if answer is not None:
                return answer
        return await handler(request)

    app = create_app(SCENARIOS)
    app.middlewares.append(replaced)
    # mockllama rewrites an error reply without its own headers into its JSON error (its one
    # on_response_prepare hook); the double's replies must go out as written.
    app.on_response_prepare.clear()
    return app


def grown_reply(size: int) -> bytes:
    """text-cut-8's recorded non-streamed /v1/responses reply with its output text grown to make the
    body about ``size`` bytes: llama-server's shape, so a recording of it loads."""
    reply = json.loads(SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False).body)
    text = reply["output"][-1]["content"][0]["text"]
    reply["output"][-1]["content"][0]["text"] = (text + " ") * (size // (len(text) + 1) + 1)
    return json.dumps(reply).encode()


def answering_responses_with(body: bytes) -> web.Application:
    """A double whose every /v1/responses reply is ``body`` (JSON), its chat twins the recordings'."""

    async def replace(request, _):
        if request.path == "/v1/responses":
            return web.Response(body=body, content_type="application/json")
        return None

    return llama_server_with(replace)


class Stalling:
    """A double whose ``path`` answers nothing until ``release()`` (then the recording answers);
    ``heard`` is set once it was asked. Released, it lets its server stop at once."""

    def __init__(self, path: str):
        self.path = path
        self.heard, self.released = threading.Event(), threading.Event()

    def app(self) -> web.Application:
        async def replace(request, body):
            if request.path != self.path:
                return None
            self.heard.set()
            while not self.released.is_set():
                await asyncio.sleep(0.05)
            return None

        return llama_server_with(replace)

    def release(self) -> None:
        self.released.set()
