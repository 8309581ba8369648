"""The whole app, as `mockllama serve` and the pytest plugin run it: the replay server, with the
teaching page and, given ``record_on_miss``, `serve --upstream`'s replay-or-record plugged in."""

from __future__ import annotations

from aiohttp import web

from mockllama.server.app import create_replay_app
from mockllama.teaching import page
from mockllama.upstream import proxy
from mockllama.upstream.record_on_miss import RecordOnMiss


def create_app(scenarios, *, record_on_miss: RecordOnMiss | None = None, **settings) -> web.Application:
    """``settings``: those of :func:`mockllama.server.app.create_replay_app` (behaviour, fallback,
    limits, journal, faults, CORS). ``record_on_miss`` sends what no recording answers to an
    upstream llama-server and records it; without it, the server never leaves its recordings."""
    route = None if record_on_miss is None else (lambda app: proxy.install(app, record_on_miss))
    return create_replay_app(scenarios, route=route, pages=(page.install,), **settings)
