"""Stopping at once: mockllama's own waits (a fault's stall, ``--delay``, ``--pace``) end when the
server is asked to stop (SIGTERM, Ctrl-C, the end of a pytest session), as a real server's
generation ends with its process.

aiohttp runs ``app.on_shutdown`` before it waits for the handlers in progress; ``Stopping`` sets
its event there, and every wait of the writer (``server.writer``) is a wait on that event with a
timeout. A reply whose head is not sent yet is answered with a 503 that says why; a reply under
way is cut, as a server that goes away cuts it. Whatever still runs after that (a slow client, a
body still arriving) gets ``HANDLERS_GRACE`` before aiohttp cancels it.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from mockllama.wire.errors import RequestError

# Seconds aiohttp gives a handler still running once the waits have ended, then again once it has
# cancelled it (web.run_app's and AppRunner's shutdown_timeout): the stop stays well under the
# 10 s after which `docker stop` kills.
HANDLERS_GRACE = 0.5


class Stopping:
    """Whether the server is stopping, and waits that end when it does."""

    def __init__(self) -> None:
        self._stopping = asyncio.Event()

    async def on_shutdown(self, app: web.Application) -> None:
        """For ``app.on_shutdown``: every wait ends now, and any wait begun later at once."""
        self._stopping.set()

    async def wait(self, seconds: float) -> bool:
        """Wait ``seconds``: True once they have passed, False as soon as the server is stopping."""
        if self._stopping.is_set():
            return False
        try:
            await asyncio.wait_for(self._stopping.wait(), seconds)
        except asyncio.TimeoutError:  # the builtin TimeoutError only from Python 3.11
            return True
        return False


def shutting_down() -> RequestError:
    """The reply to a request whose wait the stop ended before anything of it was sent."""
    return RequestError(503, "mockllama: the server is shutting down; the reply was not sent.")


STOPPING = web.AppKey("stopping", Stopping)
