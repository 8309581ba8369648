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


# Issue 47 item 12: what aiohttp's HTTP parser takes, answered as llama-server answers it
# (docs/security.md, "Bad input"; tests/server/test_hardening_http.py holds mockllama to it offline).


def _status_and_body(reply: bytes) -> tuple[str, bytes]:
    head, _, body = reply.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0].split()[1].decode(), body


@pytest.mark.parametrize(
    "line", [b"GET /health HTTP/2.0", b"GET /health HTTP/0.9", b"GET /health", b"GET /health HTTP/1.0"]
)
def test_a_request_line_that_is_not_http_1_is_refused_as_llama_server_refuses_it(llama, server, line):
    """cpp-httplib takes only HTTP/1.0 and 1.1: anything else is a 400 with an empty body."""
    request = line + b"\r\nHost: x\r\nConnection: close\r\n\r\n"
    expected = ("200", b'{"status":"ok"}') if line.endswith(b"HTTP/1.0") else ("400", b"")
    real = _status_and_body(_raw(llama.url, request))
    assert real == expected
    assert _status_and_body(_raw(server.url, request)) == real


def _chunked(path: str, body: bytes, coding: bytes) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n".encode()
    return head + b"Transfer-Encoding: " + coding + b"\r\n\r\n" + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"


@pytest.mark.parametrize("coding", [b"chunked", b"Chunked", b"gzip, chunked", b"identity, chunked"])
def test_a_transfer_encoding_ending_in_chunked_is_read_as_llama_server_reads_it(llama, server, coding):
    """The codings before ``chunked`` are ignored by both: the body is read as plain chunks."""
    request = _chunked("/v1/responses", json.dumps(TEXT_CUT_8).encode(), coding)
    real, mock = _raw(llama.url, request), _raw(server.url, request)
    assert _status_and_body(real)[0] == _status_and_body(mock)[0] == "200"
    assert json.loads(_status_and_body(mock)[1])["object"] == json.loads(_status_and_body(real)[1])["object"]


BODY_ENCODINGS = {
    "utf-8 with a byte order mark": lambda text: b"\xef\xbb\xbf" + text.encode("utf-8"),
    "utf-16le with a byte order mark": lambda text: b"\xff\xfe" + text.encode("utf-16-le"),
    "utf-16be with a byte order mark": lambda text: b"\xfe\xff" + text.encode("utf-16-be"),
    "utf-16le": lambda text: text.encode("utf-16-le"),
    "utf-32le": lambda text: text.encode("utf-32-le"),
    "utf-8 with an encoded surrogate": lambda text: text.replace("Count", "Count\ud800").encode(
        "utf-8", "surrogatepass"
    ),
}


@pytest.mark.parametrize("encoding", list(BODY_ENCODINGS))
def test_a_body_that_is_not_plain_utf8_is_read_as_llama_server_reads_it(llama, server, encoding):
    """nlohmann::json skips a UTF-8 byte order mark and reads nothing but well-formed UTF-8: UTF-16
    and UTF-32, which Python's json.loads would detect and read, and a surrogate encoded in UTF-8,
    which it would let through, are a 400 parse error."""
    sent = BODY_ENCODINGS[encoding](json.dumps(TEXT_CUT_8))
    real = _kind(*_post(llama.url, "/v1/responses", sent))[:3]
    read = encoding == "utf-8 with a byte order mark"
    assert real == ((200, "object", "response") if read else (400, "error", "invalid_request_error"))
    assert _kind(*_post(server.url, "/v1/responses", sent))[:3] == real


NOT_JSON_NUMBERS = {
    "NaN": '"max_output_tokens": NaN',
    "Infinity": '"temperature": Infinity',
    "-Infinity": '"temperature": -Infinity',
    "a number past a double": '"max_output_tokens": 1e999',
}


@pytest.mark.parametrize("field", list(NOT_JSON_NUMBERS))
def test_nan_infinity_and_an_overflowing_number_are_refused_as_llama_server_refuses_them(llama, server, field):
    """Python's json reads NaN, Infinity and 1e999 (as inf); nlohmann::json refuses all three with a 400."""
    sent = json.dumps(TEXT_CUT_8).replace('"temperature": 0', NOT_JSON_NUMBERS[field]).encode()
    assert NOT_JSON_NUMBERS[field].encode() in sent
    real = _kind(*_post(llama.url, "/v1/responses", sent))[:3]
    assert real == (400, "error", "invalid_request_error")
    assert _kind(*_post(server.url, "/v1/responses", sent))[:3] == real
