"""CORS: the same cross-origin requests to a live llama-server and to mockllama get the same CORS headers.

The header set mockllama sends (mockllama/server/cors.py) is taken from these live replies: preflights
(on API routes, on an unknown path, without an Origin), cross-origin POSTs (body and stream), a
GET, and error replies. A POST without an Origin is in every recorded cassette already
(`Access-Control-Allow-Origin` with an empty value).
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

from mockllama.app import create_app
from mockllama.server.background import BackgroundServer
from support.recordings import SCENARIOS

pytestmark = pytest.mark.live

ORIGIN = "http://example.test"
PREFLIGHT = {
    "Origin": ORIGIN,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type",
}
CUT = SCENARIOS["text-cut-8"]


def _body(path: str, stream: bool) -> bytes:
    return json.dumps(CUT.find("POST", path, stream).request_json).encode()


# name -> (method, path, body, headers); each is sent to both servers
EXCHANGES = {
    "preflight /v1/responses": ("OPTIONS", "/v1/responses", b"", PREFLIGHT),
    "preflight /v1/chat/completions": ("OPTIONS", "/v1/chat/completions", b"", PREFLIGHT),
    "preflight unknown path": ("OPTIONS", "/no/such/path", b"", PREFLIGHT),
    "preflight without Origin": ("OPTIONS", "/v1/responses", b"", {}),
    "POST /v1/responses": ("POST", "/v1/responses", _body("/v1/responses", False), {"Origin": ORIGIN}),
    "POST /v1/responses stream": ("POST", "/v1/responses", _body("/v1/responses", True), {"Origin": ORIGIN}),
    "POST /v1/chat/completions": (
        "POST",
        "/v1/chat/completions",
        _body("/v1/chat/completions", False),
        {"Origin": ORIGIN},
    ),
    "GET /v1/models": ("GET", "/v1/models", b"", {"Origin": ORIGIN}),
    "error: invalid JSON": ("POST", "/v1/responses", b"{not json", {"Origin": ORIGIN}),
    "error: unknown path": ("GET", "/no/such/path", b"", {"Origin": ORIGIN}),
}


def _send(url: str, method: str, path: str, body: bytes, headers: dict):
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)  # a loaded machine is slow
    try:
        sent = {"Content-Type": "application/json", **headers} if body else dict(headers)
        connection.request(method, path, body=body or None, headers=sent)
        response = connection.getresponse()
        response.read()
        cors = sorted(
            (name.lower(), value) for name, value in response.getheaders() if name.lower().startswith("access-control-")
        )
        return response.status, cors
    finally:
        connection.close()


@pytest.fixture(scope="module")
def llama_replies(start_llama_server):
    server = start_llama_server()
    try:
        return {name: _send(server.url, *exchange) for name, exchange in EXCHANGES.items()}
    finally:
        server.stop()


@pytest.mark.parametrize("prefix", ["", "/buggy", "/fixed", "/spec"])
def test_cors_headers_equal_llama_servers(llama_replies, prefix):
    print("\nllama-server:", json.dumps(llama_replies, indent=1))
    with BackgroundServer(create_app(SCENARIOS)) as mock:
        for name, (method, path, body, headers) in EXCHANGES.items():
            path = path if path == "/no/such/path" else prefix + path
            live_status, live_cors = llama_replies[name]
            status, cors = _send(mock.url, method, path, body, headers)
            assert cors == live_cors, name
            if method == "OPTIONS" or name.startswith("error"):
                assert status == live_status, name


def test_llama_server_allows_the_origin_it_is_sent(llama_replies):
    """What the live comparison rests on: llama-server does answer cross-origin use."""
    status, cors = llama_replies["preflight /v1/responses"]
    assert status == 200 and ("access-control-allow-origin", ORIGIN) in cors
    assert ("access-control-allow-origin", ORIGIN) in llama_replies["error: invalid JSON"][1]
