"""`serve --upstream`: what a page on another site makes the browser send is never forwarded
(issue 47, item 5). ``--cors-origin`` judges a request by its ``Origin``, but a page's ``<img>`` or
``<script>`` sends a "no-cors" GET with no ``Origin`` at all; the browser still marks it
``Sec-Fetch-Site: cross-site`` (Fetch Metadata), and that is refused before anything is forwarded,
unless ``--cors-origin`` names the page's origin. A hit is replayed as llama-server would answer it."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from mockllama.app import ServeOptions, create_app
from mockllama.server.background import BackgroundServer
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.proxy import RECORDER
from mockllama.upstream.record_mode import parse_record_mode
from mockllama.upstream.record_on_miss import RecordOnMiss
from support.httpkit import call
from support.recordings import SCENARIOS
from support.waiting import wait_for

PAGE = "http://evil.test"
# What a browser sends for <img src="http://127.0.0.1:PORT/v1/models"> on another site's page.
IMAGE = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
# fetch() of a text/plain POST (no preflight) from another site's page.
FETCH = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Origin": PAGE, "Content-Type": "text/plain"}
TEXT_CUT_8 = json.dumps(SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False).request_json).encode()


class Upstream:
    """llama-server b11434 as recorded, noting each request that reaches it."""

    def __init__(self):
        self.heard: list[str] = []

        @web.middleware
        async def note(request, handler):
            self.heard.append(f"{request.method} {request.path}")
            return await handler(request)

        app = create_app(SCENARIOS)
        app.middlewares.append(note)
        self.server = BackgroundServer(app)


@pytest.fixture
def upstream():
    running = Upstream()
    with running.server:
        yield running


@pytest.fixture
def proxy(upstream, tmp_path):
    started = []

    def start(scenarios=None, **options) -> BackgroundServer:
        url = upstream.server.url.replace("http://", "http://bob:planted-pw@")
        recording = RecordOnMiss(parse_upstream(url, 30.0), tmp_path / "recorded", parse_record_mode("new"))
        app = create_app(dict(scenarios or {}), ServeOptions(**options), record_on_miss=recording)
        started.append(BackgroundServer(app).start())
        return started[-1]

    yield start
    for server in started:
        assert wait_for(lambda server=server: not server.app[RECORDER].in_flight, 10)
        server.stop()


def _recorded(tmp_path) -> list[str]:
    directory = tmp_path / "recorded"
    return sorted(p.name for p in directory.rglob("*")) if directory.exists() else []


@pytest.mark.parametrize("path", ["/v1/models", "/props", "/health"])
def test_a_cross_site_no_cors_get_is_not_forwarded_nor_recorded(proxy, upstream, tmp_path, path):
    mock = proxy()
    status, _, body = call(mock.url, "GET", path, headers=IMAGE)
    assert status == 403, body
    error = json.loads(body)["error"]
    assert error["type"] == "permission_error" and "Sec-Fetch-Site: cross-site" in error["message"]
    assert "--cors-origin" in error["message"]
    assert upstream.heard == [] and _recorded(tmp_path) == []


@pytest.mark.parametrize("behaviour", ["buggy", "fixed"])
def test_a_cross_site_post_is_not_forwarded_nor_recorded(proxy, upstream, tmp_path, behaviour):
    mock = proxy()
    status, _, body = call(mock.url, "POST", f"/{behaviour}/v1/responses", TEXT_CUT_8, FETCH)
    assert status == 403 and json.loads(body)["error"]["type"] == "permission_error"
    assert "'http://evil.test'" in json.loads(body)["error"]["message"]
    assert upstream.heard == [] and _recorded(tmp_path) == []


@pytest.mark.parametrize("site", [None, "same-origin", "same-site", "none"])
def test_a_request_no_browser_marks_cross_site_is_forwarded(proxy, upstream, tmp_path, site):
    mock = proxy()
    status, _, _ = call(mock.url, "GET", "/v1/models", headers={"Sec-Fetch-Site": site} if site else {})
    assert status == 200 and "GET /v1/models" in upstream.heard


def test_cors_origin_naming_the_page_lets_its_cross_site_requests_through(proxy, upstream):
    mock = proxy(cors_origins=(PAGE,))
    status, _, _ = call(mock.url, "POST", "/buggy/v1/responses", TEXT_CUT_8, FETCH)
    assert status == 200 and "POST /v1/responses" in upstream.heard
    assert wait_for(lambda: not mock.app[RECORDER].in_flight, 10)  # the chat twin is sent after the reply
    heard = len(upstream.heard)
    status, _, _ = call(mock.url, "GET", "/v1/models", headers=IMAGE)  # no Origin: not the named page's
    assert status == 403 and len(upstream.heard) == heard


def test_a_cross_site_hit_is_replayed_as_llama_server_answers_it(proxy, upstream):
    mock = proxy(scenarios=SCENARIOS)
    status, headers, _ = call(mock.url, "POST", "/buggy/v1/responses", TEXT_CUT_8, FETCH)
    assert status == 200 and headers["X-Mockllama-Scenario"] == "text-cut-8"
    assert headers["Access-Control-Allow-Origin"] == PAGE
    assert upstream.heard == []
