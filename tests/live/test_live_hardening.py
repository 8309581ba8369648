"""What llama-server b11434 itself answers to the odd requests of issue 11, and mockllama beside it:
a "stream" that is not a boolean, CONNECT, and HEAD on a GET route."""

from __future__ import annotations

import http.client
import json
import socket
from urllib.parse import urlsplit

import pytest
from recordings import SCENARIOS

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


@pytest.mark.parametrize(("path", "body", "stream"), [
    ("/v1/responses", TEXT_CUT_8, "yes"), ("/v1/responses", TEXT_CUT_8, None), ("/v1/responses", TEXT_CUT_8, 1),
    ("/v1/chat/completions", CHAT_CUT_8, "yes"), ("/v1/chat/completions", CHAT_CUT_8, None),
], ids=["responses-yes", "responses-null", "responses-one", "chat-yes", "chat-null"])
def test_a_stream_that_is_not_a_boolean_is_answered_as_llama_server_answers_it(llama, server, path, body, stream):
    sent = json.dumps({**body, "stream": stream}).encode()
    real = _kind(*_post(llama.url, path, sent))
    mock = _kind(*_post(server.url, path, sent))
    assert mock == real


def _raw(url: str, request: bytes) -> bytes:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_connect_is_refused_by_both_and_mockllama_says_why_in_llama_servers_shape(llama, server):
    """llama-server refuses CONNECT with a 400 and an empty body. mockllama refuses it too, with a 404
    (aiohttp has chosen the status before mockllama sees the request) and an error body in the shape
    llama-server gives every other error."""
    request = b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nConnection: close\r\n\r\n"
    real = _raw(llama.url, request)
    mock = _raw(server.url, request)
    assert real.split()[1] == b"400" and real.partition(b"\r\n\r\n")[2] == b""
    assert mock.split()[1] == b"404", mock[:300]
    error = json.loads(mock.partition(b"\r\n\r\n")[2])["error"]
    assert error["code"] == 404 and "not a proxy" in error["message"]


def test_head_on_health_answers_like_llama_server(llama, server):
    request = b"HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    real, mock = _raw(llama.url, request), _raw(server.url, request)
    assert real.split()[1] == mock.split()[1] == b"200"
    assert real.partition(b"\r\n\r\n")[2] == mock.partition(b"\r\n\r\n")[2] == b""
