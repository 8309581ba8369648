"""What llama-server b11434 itself answers to the odd requests of issue 11, and mockllama beside it:
a "stream" that is not a boolean, CONNECT, and HEAD on a GET route."""

from __future__ import annotations

import http.client
import json
import socket
from urllib.parse import urlsplit

import pytest

from support.recordings import SCENARIOS

pytestmark = pytest.mark.live

TEXT_CUT_8 = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False).request_json
CHAT_CUT_8 = SCENARIOS["text-cut-8"].find("POST", "/v1/chat/completions", False).request_json


@pytest.fixture(scope="module")
def llama(start_llama_server):
    return start_llama_server()


def _post(url: str, path: str, body: bytes):
    """Like httpkit.call, with room for a generation on a busy 2-core machine."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    try:
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def _kind(status: int, headers, body: bytes) -> tuple:
    """What a client sees: the status, and a stream, a Responses/chat object, or an error type."""
    if status >= 400:
        error = json.loads(body)["error"]
        return status, "error", error["type"], error["message"]
    if headers.get("Content-Type", "").startswith("text/event-stream"):
        return status, "stream"
    return status, "object", json.loads(body).get("object")


@pytest.mark.parametrize(
    ("path", "body", "stream"),
    [
        ("/v1/responses", TEXT_CUT_8, "yes"),
        ("/v1/responses", TEXT_CUT_8, None),
        ("/v1/responses", TEXT_CUT_8, 1),
        ("/v1/chat/completions", CHAT_CUT_8, "yes"),
        ("/v1/chat/completions", CHAT_CUT_8, None),
    ],
    ids=["responses-yes", "responses-null", "responses-one", "chat-yes", "chat-null"],
)
def test_a_stream_that_is_not_a_boolean_is_answered_as_llama_server_answers_it(llama, server, path, body, stream):
    sent = json.dumps({**body, "stream": stream}).encode()
    real = _kind(*_post(llama.url, path, sent))
    mock = _kind(*_post(server.url, path, sent))
    assert mock == real


@pytest.mark.parametrize(
    ("path", "body", "fields"),
    [
        ("/v1/responses", TEXT_CUT_8, {"top_logprobs": 0}),
        ("/v1/chat/completions", CHAT_CUT_8, {"top_logprobs": 0}),
        ("/v1/responses", TEXT_CUT_8, {"top_logprobs": 2, "logprobs": False}),
    ],
    ids=["responses", "chat", "logprobs-false"],
)
def test_top_logprobs_without_logprobs_is_refused_as_llama_server_refuses_it(llama, server, path, body, fields):
    """Issue 26: llama-server b11434 answers top_logprobs without logprobs: true with a 400."""
    sent = json.dumps({**body, **fields}).encode()
    real = _kind(*_post(llama.url, path, sent))
    assert real[:3] == (400, "error", "invalid_request_error")
    assert _kind(*_post(server.url, path, sent)) == real


def _raw(url: str, request: bytes) -> bytes:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def _status_cors_body(reply: bytes) -> tuple:
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    cors = sorted(line.lower() for line in lines[1:] if line.lower().startswith("access-control-"))
    return lines[0].split()[1], cors, body


@pytest.mark.parametrize(
    "request_line", [b"CONNECT example.com:443", b"CONNECT /", b"CONNECT /v1/responses", b"TRACE /", b"OPTIONS *"]
)
@pytest.mark.parametrize("origin", [b"", b"Origin: http://example.test\r\n"], ids=["no-origin", "origin"])
def test_what_llama_server_answers_before_any_route_mockllama_answers_too(llama, server, request_line, origin):
    """Issue 26: a method llama-server's HTTP library does not know (CONNECT, TRACE) is a 400 with an
    empty body, whatever the target; OPTIONS * is a preflight's 200."""
    request = request_line + b" HTTP/1.1\r\nHost: x\r\n" + origin + b"Connection: close\r\n\r\n"
    real = _status_cors_body(_raw(llama.url, request))
    assert real[0] in ("400", "200") and real[2] == b""
    assert _status_cors_body(_raw(server.url, request)) == real


def test_head_on_health_answers_like_llama_server(llama, server):
    request = b"HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    real, mock = _raw(llama.url, request), _raw(server.url, request)
    assert real.split()[1] == mock.split()[1] == b"200"
    assert real.partition(b"\r\n\r\n")[2] == mock.partition(b"\r\n\r\n")[2] == b""
