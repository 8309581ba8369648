"""HTTP that cannot be parsed, and a body that never arrives (issue 27 items 15 and 16).

15. aiohttp's HTTP parser answers a request it cannot parse itself, before any route, hook or
    handler of mockllama's exists for it: a plain-text 400, without Access-Control-Allow-Origin,
    and the connection closed. These are the only replies that are not in llama-server's JSON
    shape; ``UNPARSABLE`` is the exact list the docs give (no browser and no HTTP client library
    sends any of them). `serve` logs one line for each, not a traceback.
16. A request body that stops short of its Content-Length is given up after ``--body-timeout``
    seconds (60, as nginx's client_body_timeout), with a 408 in llama-server's shape. This needs
    a change in mockllama/server.py, written out in the lead's notes (27-server-changes.md); until
    it is applied, its tests are strict xfails.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time

import pytest

from mockllama.app import ServeOptions, create_app
from mockllama.server.background import BackgroundServer
from support.recordings import SCENARIOS
from support.waiting import wait_until_listening

MOCKLLAMA = [sys.executable, "-m", "mockllama"]

# What the docs list: request bytes -> the start of aiohttp's plain-text reason. Each is a little
# over its limit, no more: the server closes once it has refused, and bytes it never read make
# the close a reset, which can reach the client before the 400 does.
UNPARSABLE = {
    "a header line over 8190 bytes": (
        b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9_000 + b"\r\n\r\n",
        "Got more than 8190 bytes when reading",
    ),
    "a request line over 8190 bytes": (
        b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        "Got more than 8190 bytes when reading",
    ),
    "more than 128 headers": (
        b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(200)) + b"\r\n",
        "Too many headers received",
    ),
    "Content-Length with Transfer-Encoding": (
        b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "Transfer-Encoding can't be present with Content-Length",
    ),
    "two Content-Lengths": (
        b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        "Duplicate Content-Length",
    ),
    "a Content-Length that is not a number": (
        b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        "Invalid character in Content-Length",
    ),
    "a Transfer-Encoding other than chunked": (
        b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        "Request has invalid `Transfer-Encoding`",
    ),
    "a bad chunk size": (
        b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "Invalid character in chunk size",
    ),
    "a control character (NUL) in a header value": (
        b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
        "Invalid header value char",
    ),
    "a header name with a space or other non-token character": (
        b"GET /health HTTP/1.1\r\nHost : x\r\n\r\n",
        "Invalid header token",
    ),
    "a folded header line (obs-fold)": (
        b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n",
        "Unexpected whitespace after header value",
    ),
    "lines ended by a bare LF": (b"GET /health HTTP/1.1\nHost: x\n\n", "Bad status line"),
    "an HTTP version other than 1.0 or 1.1": (b"GET /health HTTP/9.9\r\nHost: x\r\n\r\n", "Bad status line"),
    "a method that is not a token": (b"G@T /health HTTP/1.1\r\nHost: x\r\n\r\n", "Invalid method encountered"),
    "a byte outside printable ASCII in the target": (
        b"GET /health?q=\xff HTTP/1.1\r\nHost: x\r\n\r\n",
        "Invalid char in url",
    ),
    "TLS sent to the HTTP port": (
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64,
        "Received HTTPS traffic on an HTTP port",
    ),
}


def exchange(port: int, data: bytes, timeout: float = 10) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        while piece := sock.recv(65536):  # until the server closes: every one of these closes it
            received += piece
    return received


@pytest.fixture(scope="module")
def restricted():
    """With --cors-origin too: no hook of mockllama's runs for these, so none adds a header."""
    with BackgroundServer(create_app(SCENARIOS, ServeOptions(cors_origins=("http://localhost:5173",)))) as server:
        yield server


@pytest.mark.parametrize("case", list(UNPARSABLE))
def test_what_the_http_parser_refuses_is_the_documented_plain_400(server, restricted, case):
    data, reason = UNPARSABLE[case]
    for running in (server, restricted):
        head, _, body = exchange(running.port, data).partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        assert lines[0] == "HTTP/1.0 400 Bad Request", lines[0]
        headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
        assert headers["content-type"] == "text/plain; charset=utf-8"
        assert not any(name.startswith("access-control-") for name in headers)
        assert body.decode("utf-8", "replace").startswith(reason), body[:100]


def test_a_request_that_parses_gets_llama_servers_shape_even_when_odd(server):
    """The line between the two: what the parser takes reaches mockllama and its JSON errors."""
    odd = b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nConnection: close\r\n\r\n{"
    head, _, body = exchange(server.port, odd).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and json.loads(body)["error"]["type"] == "invalid_request_error"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_logs_one_line_per_unparsable_request_not_a_traceback():
    port = _free_port()
    serve = subprocess.Popen(
        [*MOCKLLAMA, "serve", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until_listening(serve, port, 30, "mockllama serve")
        for data, _ in UNPARSABLE.values():
            exchange(port, data)
    finally:
        serve.terminate()
        _, stderr = serve.communicate(timeout=30)
    assert "Traceback" not in stderr, stderr[-3000:]
    refused = [line for line in stderr.splitlines() if "is not valid HTTP" in line]
    # A bad method on a connection's first request (TLS is one) aiohttp logs at debug level only
    assert len(refused) == len(UNPARSABLE) - 2, stderr[-3000:]
    assert all(
        re.match(r"mockllama: refused a request from 127\.0\.0\.1 that is not valid HTTP \(400: ", line)
        for line in refused
    ), refused
    assert not any(re.search(r"[\x00-\x08\x0b-\x1f\x7f]", line) for line in stderr.splitlines())


# --- 16. A body that stops short of its Content-Length ----------------------------------------------


def _short_body(port: int, path: str = "/v1/responses", until_closed: bool = False) -> tuple[float, bytes, float]:
    """Send 10 of 100 promised body bytes, then nothing: (seconds to the whole reply, the reply,
    seconds until the server closed the connection, when ``until_closed``)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n".encode()
            + b'{"input": '
        )
        received, answered = b"", None
        while piece := sock.recv(65536):
            received += piece
            head, _, body = received.partition(b"\r\n\r\n")
            length = re.search(rb"Content-Length: (\d+)", head)
            if answered is None and length and len(body) >= int(length.group(1)):
                answered = time.monotonic() - started
                if not until_closed:
                    break
    return answered, received, time.monotonic() - started


@pytest.mark.parametrize("path", ["/v1/responses", "/fixed/v1/chat/completions"])
def test_a_body_that_stops_short_is_given_up_after_the_body_timeout(path):
    with BackgroundServer(create_app(SCENARIOS, ServeOptions(body_timeout=0.5))) as server:
        answered, received, closed = _short_body(server.port, path, until_closed=path == "/v1/responses")
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), received[:200]
    error = json.loads(body)["error"]
    assert error["code"] == 408 and error["type"] == "invalid_request_error"
    assert "0.5 s" in error["message"] and "--body-timeout" in error["message"]
    assert 0.5 <= answered < 5, answered
    # then aiohttp's lingering close: up to 10 s more for the rest of the body, never the 200 s seen
    assert closed < 20, closed


def test_the_body_timeout_applies_on_a_miss_under_upstream_too(tmp_path):
    from mockllama.upstream.client import parse_upstream
    from mockllama.upstream.record_on_miss import RecordOnMiss

    with BackgroundServer(create_app(SCENARIOS)) as up:
        options = RecordOnMiss(parse_upstream(up.url), tmp_path / "recorded")
        with BackgroundServer(create_app({}, ServeOptions(body_timeout=0.5), record_on_miss=options)) as mock:
            answered, received, _ = _short_body(mock.port)
    assert received.startswith(b"HTTP/1.1 408") and answered < 5
    assert not (tmp_path / "recorded").exists()


def test_the_body_timeout_is_60_s_by_default_as_nginx_and_serve_has_an_option():
    from click.testing import CliRunner

    from mockllama.cli import main
    from mockllama.server.options import DEFAULT_BODY_TIMEOUT

    assert DEFAULT_BODY_TIMEOUT == 60.0
    help_text = CliRunner().invoke(main, ["serve", "--help"]).output
    assert "--body-timeout" in help_text and "60" in help_text
