"""Work the server does soon after its start, between requests, that the first request needing it
would otherwise pay for: the 404's nearest search gathers each route's candidates, work that grows
with the recordings, which a first miss would pay for on top of its own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from mockllama.matching.matcher import Matcher

log = logging.getLogger("mockllama")

# After the start: a client's first requests (a health check, the first replies) come first.
PREPARE_AFTER_S = 1.0


async def _prepare(matcher: Matcher) -> None:
    await asyncio.sleep(PREPARE_AFTER_S)
    try:
        for _ in matcher.prepare_nearest():
            await asyncio.sleep(0)  # one route at a time: requests that came meanwhile go between
    except Exception as err:  # the first miss meets it again, as an error reply: the app carries on
        log.warning("mockllama: could not prepare the 404's nearest search ahead of a miss: %r", err)


def nearest_prepared_soon(matcher: Matcher) -> Callable[[web.Application], AsyncIterator[None]]:
    """For ``app.cleanup_ctx``: prepare ``matcher``'s nearest search in the background, from
    ``PREPARE_AFTER_S`` after the start; stopped with the app. A miss before then gathers its
    route itself."""

    async def context(_app: web.Application) -> AsyncIterator[None]:
        task = asyncio.get_running_loop().create_task(_prepare(matcher))
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return context
