"""CORS as llama-server does it (the header set is checked against a live one in tests/live/test_live_cors.py)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mockllama.cli import main
from mockllama.server.app import GET_ROUTES, POST_ROUTES
from mockllama.server.cors import PREFLIGHT_HEADERS, check_origin
from support.httpkit import call, request_bytes
from support.recordings import SCENARIOS

ORIGIN = "http://example.test"
PREFLIGHT = {
    "Origin": ORIGIN,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type",
}
PATHS = [f"{prefix}{route}" for prefix in ("", "/buggy", "/fixed", "/spec") for route in (*POST_ROUTES, *GET_ROUTES)]
CUT = SCENARIOS["text-cut-8"]


def _cors(headers) -> dict[str, list[str]]:
    """Every Access-Control-* header of a reply, with all its values (a repeated header is a bug)."""
    found: dict[str, list[str]] = {}
    for name, value in headers.items():
        if name.lower().startswith("access-control-"):
            found.setdefault(name.lower(), []).append(value)
    return found


def _expected_preflight(origin=ORIGIN):
    return {"access-control-allow-origin": [origin], **{name.lower(): [value] for name, value in PREFLIGHT_HEADERS}}


@pytest.mark.parametrize("path", [*PATHS, "/", "/no/such/path"])
def test_preflight_on_every_path(server, path):
    status, headers, body = call(server.url, "OPTIONS", path, headers=PREFLIGHT)
    assert (status, body) == (200, b"")
    assert _cors(headers) == _expected_preflight()


@pytest.mark.parametrize("behaviour", ["buggy", "fixed", "spec"])
@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_cross_origin_reply_allows_its_origin_in_every_behaviour(server, behaviour, stream):
    interaction = CUT.find("POST", "/v1/responses", stream)
    status, headers, _ = call(
        server.url, "POST", f"/{behaviour}/v1/responses", request_bytes(interaction), {"Origin": ORIGIN}
    )
    assert status == 200
    assert _cors(headers) == {"access-control-allow-origin": [ORIGIN]}  # replaces the recorded empty value


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status"),
    [
        ("POST", "/fixed/v1/responses", b"{not json", {}, 400),
        ("POST", "/spec/v1/responses", json.dumps({"model": "x", "input": "unrecorded"}).encode(), {}, 404),
        ("GET", "/v1/responses", b"", {}, 405),
        ("POST", "/v1/responses", b"{}", {"X-Mockllama-Behaviour": "nonsense"}, 400),
        ("GET", "/no/such/path", b"", {}, 404),
        ("POST", "/v1/responses", b"x" * (1024 * 1024 + 1), {}, 413),
    ],
    ids=["bad-json", "no-match", "wrong-method", "bad-behaviour", "no-route", "too-large"],
)
def test_error_replies_carry_the_origin_too(server, method, path, body, headers, status):
    got, reply_headers, reply = call(server.url, method, path, body, {"Origin": ORIGIN, **headers})
    assert got == status and json.loads(reply)["error"]["code"] == status
    assert _cors(reply_headers) == {"access-control-allow-origin": [ORIGIN]}


def test_recorded_llama_server_error_replies_carry_the_origin(server):
    recorded = next(i for i in SCENARIOS["errors"].interactions if i.status == 400)
    status, headers, _ = call(server.url, recorded.method, recorded.path, request_bytes(recorded), {"Origin": ORIGIN})
    assert status == 400
    assert _cors(headers) == {"access-control-allow-origin": [ORIGIN]}


def test_without_an_origin_the_header_is_empty_as_llama_server_sends_it(server):
    status, headers, _ = call(server.url, "GET", "/v1/models")
    assert status == 200 and _cors(headers) == {"access-control-allow-origin": [""]}
    status, headers, _ = call(server.url, "GET", "/no/such/path")
    assert status == 404 and _cors(headers) == {"access-control-allow-origin": [""]}
    status, headers, _ = call(server.url, "OPTIONS", "/v1/responses")
    assert status == 200 and _cors(headers) == _expected_preflight("")


def test_the_teaching_page_allows_the_origin(server):
    status, headers, _ = call(server.url, "GET", "/", headers={"Origin": ORIGIN})
    assert status == 200 and _cors(headers) == {"access-control-allow-origin": [ORIGIN]}


# Issue 47 item 9: mockllama's own routes (/_mockllama/*) are shared with no origin it does not name

OWN_PATHS = ["/_mockllama/journal", "/_mockllama/scenarios.json", "/_mockllama/static/app.js"]


def _journal_ids(url) -> list[int]:
    status, _, body = call(url, "GET", "/_mockllama/journal")
    assert status == 200
    return [entry["id"] for entry in json.loads(body)["entries"]]


@pytest.mark.parametrize("path", OWN_PATHS)
def test_with_the_default_cors_no_other_origin_may_read_mockllamas_own_routes(server, path):
    status, headers, body = call(server.url, "GET", path, headers={"Origin": ORIGIN})
    assert status == 403 and _cors(headers) == {}, headers
    assert json.loads(body)["error"]["type"] == "permission_error"
    assert "--cors-origin" in json.loads(body)["error"]["message"]
    status, headers, _ = call(server.url, "GET", path)  # no Origin: curl, explain --journal, the tests
    assert status == 200 and _cors(headers) == {}, headers  # and nothing shared with a page


def test_with_the_default_cors_no_other_origin_may_clear_the_journal(start_server):
    running = start_server()
    call(running.url, "GET", "/health")
    preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "DELETE"}
    status, headers, _ = call(running.url, "OPTIONS", "/_mockllama/journal", headers=preflight)
    assert status == 403 and _cors(headers) == {}
    status, headers, _ = call(running.url, "DELETE", "/_mockllama/journal", headers={"Origin": ORIGIN})
    assert status == 403 and _cors(headers) == {}
    assert len(_journal_ids(running.url)) == 1  # not cleared


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_a_cross_site_request_without_an_origin_may_not_use_the_journal(start_server, method):
    """A page's <img src=".../_mockllama/journal"> sends no Origin; Fetch Metadata still names it."""
    running = start_server()
    call(running.url, "GET", "/health")
    headers = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
    status, reply_headers, body = call(running.url, method, "/_mockllama/journal", headers=headers)
    assert status == 403 and _cors(reply_headers) == {}
    assert "mockllama's own route" in json.loads(body)["error"]["message"]
    assert len(_journal_ids(running.url)) == 1


def test_the_servers_own_page_may_use_its_own_routes(server):
    for headers in ({"Origin": server.url}, {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}):
        status, reply_headers, _ = call(server.url, "GET", "/_mockllama/journal", headers=headers)
        assert status == 200 and _cors(reply_headers) == {}, headers  # same-origin: nothing to share


def test_cors_origin_shares_mockllamas_own_routes_with_the_origins_it_names(start_server):
    allowed = "http://localhost:5173"
    restricted = start_server(cors_origins=(allowed,))
    preflight = {"Origin": allowed, "Access-Control-Request-Method": "DELETE"}
    status, headers, _ = call(restricted.url, "OPTIONS", "/_mockllama/journal", headers=preflight)
    assert status == 200 and _cors(headers) == _expected_preflight(allowed)
    for path in OWN_PATHS:
        page = {"Origin": allowed, "Sec-Fetch-Site": "cross-site"}
        status, headers, _ = call(restricted.url, "GET", path, headers=page)
        assert status == 200 and _cors(headers) == {"access-control-allow-origin": [allowed]}, path
        status, headers, _ = call(restricted.url, "GET", path)
        assert status == 200 and _cors(headers) == {}, path
    status, headers, body = call(restricted.url, "DELETE", "/_mockllama/journal", headers={"Origin": allowed})
    assert status == 200 and json.loads(body)["cleared"] is True


def test_cors_origin_restricts_it(start_server):
    allowed, other = "http://localhost:5173", "http://elsewhere.test"
    restricted = start_server(cors_origins=(allowed, "https://app.test"))
    status, headers, _ = call(restricted.url, "OPTIONS", "/v1/responses", headers={**PREFLIGHT, "Origin": allowed})
    assert status == 200 and _cors(headers) == _expected_preflight(allowed)
    status, headers, body = call(restricted.url, "OPTIONS", "/v1/responses", headers={**PREFLIGHT, "Origin": other})
    assert status == 403 and _cors(headers) == {}
    message = json.loads(body)["error"]["message"]
    assert other in message and allowed in message and "--cors-origin" in message
    assert json.loads(body)["error"]["type"] == "permission_error"  # llama-server's type for a 403
    interaction = CUT.find("POST", "/v1/responses", False)
    status, headers, body = call(
        restricted.url, "POST", "/fixed/v1/responses", request_bytes(interaction), {"Origin": other}
    )
    assert status == 403 and _cors(headers) == {}  # refused before anything is done, not only kept from the page
    assert json.loads(body)["error"]["message"] == message
    status, headers, _ = call(
        restricted.url, "POST", "/fixed/v1/responses", request_bytes(interaction), {"Origin": allowed}
    )
    assert status == 200 and _cors(headers) == {"access-control-allow-origin": [allowed]}
    status, headers, _ = call(restricted.url, "GET", "/health")  # no Origin: not a browser, answered as always
    assert status == 200 and _cors(headers) == {"access-control-allow-origin": [""]}


@pytest.mark.parametrize("origin", ["http://localhost:5173", "https://app.test", "null"])
def test_check_origin_accepts_what_browsers_send(origin):
    assert check_origin(origin) == origin


@pytest.mark.parametrize("origin", ["localhost:5173", "http://app.test/", "http://app.test/page", "ftp://x", "*", ""])
def test_check_origin_refuses_anything_else(origin):
    with pytest.raises(ValueError, match="scheme://host"):
        check_origin(origin)


def test_serve_refuses_a_bad_cors_origin():
    result = CliRunner().invoke(main, ["serve", "--cors-origin", "localhost:5173"])
    assert result.exit_code == 2
    assert "--cors-origin" in result.output and "scheme://host[:port]" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("method", "path", "content_type"),
    [
        ("POST", "/v1/responses", "text/plain"),  # a "simple" request: a browser sends it with no preflight
        ("POST", "/v1/chat/completions", "application/x-www-form-urlencoded"),
        ("GET", "/_mockllama/journal", None),
        ("GET", "/_mockllama/scenarios.json", None),
        ("DELETE", "/_mockllama/journal", None),
        ("GET", "/no/such/path", None),
    ],
)
def test_cors_origin_refuses_every_request_from_another_origin_before_doing_anything(
    start_server, method, path, content_type
):
    restricted = start_server(cors_origins=("http://localhost:5173",))
    body = request_bytes(CUT.find("POST", "/v1/responses", False)) if method == "POST" else b""
    headers = {"Origin": "http://elsewhere.test", **({"Content-Type": content_type} if content_type else {})}
    status, reply_headers, reply = call(restricted.url, method, path, body, headers)
    assert status == 403 and _cors(reply_headers) == {}
    error = json.loads(reply)["error"]
    assert error["type"] == "permission_error" and "'http://elsewhere.test' is not allowed" in error["message"]
    status, _, journal = call(restricted.url, "GET", "/_mockllama/journal")
    assert status == 200 and json.loads(journal)["entries"] == []  # nothing was answered, nor cleared


def test_without_cors_origin_any_origin_is_answered_as_llama_server_does(server):
    status, headers, _ = call(
        server.url,
        "POST",
        "/fixed/v1/responses",
        request_bytes(CUT.find("POST", "/v1/responses", False)),
        {"Origin": "http://elsewhere.test", "Content-Type": "text/plain"},
    )
    assert status == 200 and _cors(headers) == {"access-control-allow-origin": ["http://elsewhere.test"]}
