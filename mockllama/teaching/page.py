"""The teaching page on the server: ``GET /`` and its files, fed by ``/_mockllama/scenarios.json``
(what each behaviour sends for each scenario, from ``explain``). Plugged into the replay app as one
of its pages, so the server does not know the teaching tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from aiohttp import web

from mockllama.server.app import SETTINGS, add_route, answers_errors, mockllama_headers, require_method

WEB_DIR = Path(__file__).resolve().parent / "web"
WEB_FILES = frozenset(path.name for path in WEB_DIR.iterdir() if path.is_file())
# The page's data, built on first use and again after the matcher gains a recording (record on a miss):
# the JSON body being made, by the matcher's generation. It is made on a worker thread, once however
# many ask at the same time: with thousands of recordings it takes seconds, which the event loop, and
# every other client, would otherwise wait out.
STORIES = web.AppKey("teaching_stories", dict)


@answers_errors
async def teaching_page(request: web.Request) -> web.FileResponse:
    require_method(request, "GET")
    return web.FileResponse(WEB_DIR / "index.html")


@answers_errors
async def web_file(request: web.Request) -> web.FileResponse:
    """The page's own files, by name: nothing else, and nothing outside the package, can be asked for."""
    require_method(request, "GET")
    name = request.match_info["name"]
    if name not in WEB_FILES:
        raise web.HTTPNotFound()
    return web.FileResponse(WEB_DIR / name)


@answers_errors
async def teaching_data(request: web.Request) -> web.Response:
    require_method(request, "GET")
    settings, built = request.app[SETTINGS], request.app[STORIES]
    generation = settings.matcher.generation
    if generation not in built:
        built.clear()
        making = asyncio.get_running_loop().run_in_executor(None, teaching_json, dict(settings.scenarios))
        built[generation] = asyncio.ensure_future(making)
    body = await asyncio.shield(built[generation])  # a client that leaves does not stop it for the others
    return web.Response(body=body, content_type="application/json", headers=mockllama_headers("none", "none"))


def teaching_json(scenarios: dict) -> bytes:
    """The page's data as the body sent: every scenario's story (``explain.stories``)."""
    # explain is imported when the page first asks for its data, not when the server starts.
    from mockllama.teaching.explain import stories

    return json.dumps(stories(scenarios)).encode("utf-8")


def install(app: web.Application) -> None:
    app[STORIES] = {}
    add_route(app, "/", teaching_page)
    add_route(app, "/_mockllama/scenarios.json", teaching_data)
    add_route(app, "/_mockllama/static/{name}", web_file)
