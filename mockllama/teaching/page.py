"""The teaching page on the server: ``GET /`` and its files, fed by ``/_mockllama/scenarios.json``
(what each behaviour sends for each scenario, from ``explain``). Plugged into the replay app as one
of its pages, so the server does not know the teaching tools."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from mockllama.server.app import SETTINGS, add_route, answers_errors, mockllama_headers, require_method

WEB_DIR = Path(__file__).resolve().parent / "web"
WEB_FILES = frozenset(path.name for path in WEB_DIR.iterdir() if path.is_file())
# The page's data, built on first use and again after the matcher gains a recording (record on a miss).
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
        # explain is imported when the page first asks for its data, not when the server starts.
        from mockllama.teaching.explain import stories

        built.clear()
        built[generation] = stories(settings.scenarios)
    return web.json_response(built[generation], headers=mockllama_headers("none", "none"))


def install(app: web.Application) -> None:
    app[STORIES] = {}
    add_route(app, "/", teaching_page)
    add_route(app, "/_mockllama/scenarios.json", teaching_data)
    add_route(app, "/_mockllama/static/{name}", web_file)
