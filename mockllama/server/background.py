"""Run the mock server on its own thread and event loop, for tests and for sync clients."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading

from aiohttp import web

from mockllama.server.options import DEFAULT_HOST
from mockllama.server.stopping import HANDLERS_GRACE

log = logging.getLogger("mockllama")

# The longest stop() waits for the app's clean-up, which bounds itself (the waits end at once,
# recordings in progress get their grace): past it, the server's thread is left to the process.
STOP_TIMEOUT = 60.0


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
        self._runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=HANDLERS_GRACE)
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
            try:
                asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(STOP_TIMEOUT)
            except concurrent.futures.TimeoutError:
                log.warning("mockllama: the server had not stopped after %g s; leaving it behind", STOP_TIMEOUT)
            self._runner = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
