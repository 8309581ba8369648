"""A page on another origin uses mockllama with fetch(), in headless Chromium, as it would llama-server.

The page is served from a second loopback port, so every request it makes is cross-origin: a
JSON POST needs the CORS preflight, and the reply needs Access-Control-Allow-Origin.
"""

from __future__ import annotations

import html
import json
import re

from aiohttp import web

from mockllama.server.background import BackgroundServer
from support import browserkit
from support.recordings import SCENARIOS

# Reads the stream to the end, then writes the terminal event, or the error, into the DOM.
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>cross-origin fetch</title></head>
<body><pre id="result">pending</pre>
<script>
const target = %(target)s, request = %(request)s;
async function run() {
  const reply = await fetch(target, {method: "POST", headers: {"Content-Type": "application/json"},
                                     body: JSON.stringify(request)});
  const reader = reply.body.getReader(), decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    text += decoder.decode(value, {stream: true});
  }
  const events = text.split("\\n\\n").filter(b => b.includes("data: ")).map(
    b => JSON.parse(b.slice(b.indexOf("data: ") + 6)));
  const last = events[events.length - 1];
  return `terminal=${last.type} status=${last.response.status} events=${events.length}`;
}
run().then(line => { document.getElementById("result").textContent = line; },
           error => { document.getElementById("result").textContent = `error=${error}`; });
</script></body></html>
"""


def _page_server(target: str) -> BackgroundServer:
    """The page's own origin: a second server, on another loopback port."""
    request = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", True).request_json
    page = PAGE % {"target": json.dumps(target), "request": json.dumps(request)}

    async def index(_request: web.Request) -> web.Response:
        return web.Response(text=page, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", index)
    return BackgroundServer(app)


def _result(browser: str, profile, page_url: str) -> str:
    dom = browserkit.headless(browser, profile, "--dump-dom", page_url).stdout
    found = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return html.unescape(found.group(1))


def _expected_event_count() -> int:
    from mockllama.behaviours.replay import reply_for

    scenario = SCENARIOS["text-cut-8"]
    return len(reply_for("fixed", scenario.find("POST", "/v1/responses", True), scenario).events)


def test_a_page_on_another_origin_reads_a_fixed_stream_to_its_end(server, tmp_path):
    browser = browserkit.chromium()
    with _page_server(server.url + "/fixed/v1/responses") as page:
        assert page.port != server.port
        result = _result(browser, tmp_path / "profile", page.url + "/")
    assert result == f"terminal=response.incomplete status=incomplete events={_expected_event_count()}"


def test_the_browser_refuses_it_when_cors_origin_excludes_the_page(start_server, tmp_path):
    """The control: the same page fails when the server allows only another origin."""
    browser = browserkit.chromium()
    restricted = start_server(cors_origins=("http://elsewhere.test",))
    with _page_server(restricted.url + "/fixed/v1/responses") as page:
        result = _result(browser, tmp_path / "profile", page.url + "/")
    assert result.startswith("error=TypeError"), result
