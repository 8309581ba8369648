"""Run the mock server on its own thread and event loop, for tests and for sync clients."""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web

from mockllama.server.options import DEFAULT_HOST


class BackgroundServer:
    """``with BackgroundServer(app) as server: server.url`` -> ``http://127.0.0.1:PORT``."""

    def __init__(self, app: web.Application, host: str = DEFAULT_HOST, port: int = 0):
        self.app = app
        self.host = host
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mockllama-server", daemon=True)
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def base_url(self, behaviour: str) -> str:
        """The OpenAI-style base URL (ending in ``/v1``) for one behaviour."""
        return f"{self.url}/{behaviour}/v1"

    async def _start(self) -> None:
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def start(self) -> BackgroundServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            # No time limit here: the app's own clean-up bounds itself (recordings in progress
            # are given a short grace to finish, then abandoned).
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result()
            self._runner = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
