"""The server against the requests an adversarial review found: deep nesting, lone surrogates,
memory of selections, file descriptors and methods (issue 11, items 5 to 9)."""

from __future__ import annotations

import json
import logging
import os
import resource
import socket
import subprocess
import sys
import time
import tracemalloc
from urllib.parse import urlsplit

import pytest

from mockllama.matching.matcher import Matcher
from support.httpkit import call, post_json

SEED = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0}
MOCKLLAMA = [sys.executable, "-m", "mockllama"]


def _error(body: bytes) -> dict:
    payload = json.loads(body)
    assert set(payload) == {"error"} and set(payload["error"]) == {"code", "message", "type"}
    return payload["error"]


def _no_tracebacks(caplog) -> None:
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


# 5. Deep nesting


@pytest.mark.parametrize("depth", [129, 490, 5000, 100_000])
def test_deeply_nested_bodies_get_a_400_and_no_traceback(server, caplog, depth):
    caplog.set_level(logging.DEBUG, logger="mockllama")
    body = b'{"input": ' + b"[" * depth + b"]" * depth + b"}"
    status, headers, reply = call(server.url, "POST", "/v1/responses", body)
    assert status == 400
    error = _error(reply)
    assert error["type"] == "invalid_request_error" and "128 levels" in error["message"]
    assert headers["X-Mockllama-Behaviour"] == "buggy"
    _no_tracebacks(caplog)


def test_unterminated_deep_nesting_is_refused_too(server, caplog):
    caplog.set_level(logging.DEBUG, logger="mockllama")
    status, _, reply = call(server.url, "POST", "/v1/responses", b"[" * 100_000)
    assert status == 400 and _error(reply)["code"] == 400
    _no_tracebacks(caplog)


def test_many_brackets_that_do_not_nest_deeply_are_matched_as_usual(server):
    many_messages = {**SEED, "input": [{"role": "user", "content": "[{"}] * 300}
    status, _, reply = post_json(server.url, "/v1/responses", many_messages)
    assert status == 404 and "Nearest scenario" in _error(reply)["message"]
    brackets_in_text = {**SEED, "input": "[" * 1000}
    status, _, reply = post_json(server.url, "/v1/responses", brackets_in_text)
    assert status == 404 and "Nearest scenario" in _error(reply)["message"]


# 6. Lone surrogate, and errors raised while building an error


@pytest.mark.parametrize(
    "body",
    [
        b'{"input":"\\ud800"}',
        b'{"model":"x","input":"\\udfff","max_output_tokens":8}',
        b'{"input":"x","model":"\\ud800"}',
    ],
)
def test_a_lone_surrogate_gets_an_error_in_llama_servers_shape(server, caplog, body):
    caplog.set_level(logging.DEBUG, logger="mockllama")
    status, headers, reply = call(server.url, "POST", "/v1/responses", body)
    assert status in (400, 404)
    assert headers["Content-Type"].startswith("application/json")
    assert _error(reply)["code"] == status
    _no_tracebacks(caplog)


def test_a_failure_while_building_the_error_still_answers_in_shape(start_server, monkeypatch, caplog):
    import mockllama.server.app

    def broken(*args, **kwargs):
        raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")

    running = start_server()
    monkeypatch.setattr(mockllama.server.app, "error_response", broken)
    status, headers, reply = post_json(running.url, "/v1/responses", {**SEED, "max_output_tokens": 9})
    assert status == 500
    assert headers["Content-Type"].startswith("application/json")
    assert _error(reply)["type"] == "server_error"
    _no_tracebacks(caplog)


# 7. Memory of selections


def test_remembered_selections_are_bounded_by_bytes(scenarios):
    """600 distinct 60 KB bodies (36 MB): the memo keeps at most 16 MiB of them."""
    matcher = Matcher(scenarios)
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        for number in range(600):
            body = json.dumps({"model": "text-cut-8", "input": f"{number:06d}" + "x" * 60_000}).encode()
            assert matcher.select("POST", "/v1/responses", body).interaction.scenario == "text-cut-8"
        held = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    assert held < 20 * 1024 * 1024, f"the memo holds {held / 2**20:.1f} MiB"
    info = matcher._remembered.cache_info()
    assert info.bytes <= 16 * 1024 * 1024
    assert 200 <= info.currsize < 600  # it still remembers, and it forgot the oldest
    again = json.dumps({"model": "text-cut-8", "input": "000599" + "x" * 60_000}).encode()
    matcher.select("POST", "/v1/responses", again)
    assert matcher._remembered.cache_info().hits == info.hits + 1  # the newest is still remembered


# 8. File descriptors


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(limits: tuple[int, int], port: int) -> subprocess.Popen:
    def lower_limits():
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)

    return subprocess.Popen(
        [*MOCKLLAMA, "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lower_limits,
    )


def _wait_until_serving(process: subprocess.Popen, url: str) -> None:
    deadline = time.monotonic() + 180  # start-up is slow on a loaded 2-core machine
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        try:
            call(url, "GET", "/health")
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("mockllama serve did not start")


def _soft_nofile(pid: int) -> int:
    for line in open(f"/proc/{pid}/limits"):
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open files limit")


@pytest.mark.skipif(not os.path.exists("/proc/self/limits"), reason="needs Linux /proc")
def test_serve_raises_the_open_file_soft_limit_to_the_hard_limit():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    hard = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    if hard <= 256:
        pytest.skip(f"the hard limit here is {hard}: nothing to raise")  # the test needs headroom
    port = _free_port()
    process = _serve((256, hard), port)
    try:
        _wait_until_serving(process, f"http://127.0.0.1:{port}")
        assert _soft_nofile(process.pid) == hard
    finally:
        process.terminate()
        process.communicate(timeout=20)


def test_running_out_of_descriptors_is_logged_once_a_second_without_tracebacks():
    port = _free_port()
    process = _serve((64, 64), port)  # a hard limit too: nothing to raise
    idle = []
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until_serving(process, url)
        for _ in range(120):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(3)
    finally:
        for sock in idle:
            sock.close()
        time.sleep(0.5)
        process.terminate()
        _, err = process.communicate(timeout=20)
    text = err.decode(errors="replace")
    reports = text.count("cannot accept new connections")
    assert 1 <= reports <= 5, text[-3000:]
    assert "Traceback" not in text and "out of system resource" not in text.replace(
        "cannot accept new connections", ""
    ), text[-3000:]
    assert "open files limit 64" in text


# 9. Methods


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("GET", "/v1/responses", "POST"),
        ("DELETE", "/fixed/v1/chat/completions", "POST"),
        ("POST", "/health", "GET, HEAD"),
        ("PUT", "/v1/models", "GET, HEAD"),
        ("POST", "/", "GET, HEAD"),
        ("PATCH", "/_mockllama/scenarios.json", "GET, HEAD"),
    ],
)
def test_a_405_says_which_methods_are_allowed(server, method, path, allow):
    status, headers, reply = call(server.url, method, path, b"{}")
    assert status == 405
    assert headers["Allow"] == ", ".join(sorted([*allow.split(", "), "OPTIONS"]))  # every path answers OPTIONS
    assert _error(reply)["code"] == 405 and f"use {allow}" in _error(reply)["message"]


def _raw_exchange(url: str, request: bytes) -> bytes:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


@pytest.mark.parametrize(
    ("method", "target"),
    [(b"CONNECT", b"example.com:443"), (b"CONNECT", b"127.0.0.1:22"), (b"CONNECT", b"/"), (b"TRACE", b"/v1/responses")],
)
def test_a_method_llama_server_does_not_know_is_a_400_with_an_empty_body(server, method, target):
    """As llama-server b11434 answers CONNECT and TRACE, whatever the target (tests/live)."""
    reply = _raw_exchange(
        server.url, method + b" " + target + b" HTTP/1.1\r\nHost: " + target + b"\r\nConnection: close\r\n\r\n"
    )
    head, _, body = reply.partition(b"\r\n\r\n")
    assert int(head.split()[1]) == 400 and body == b""
    assert b"content-length: 0" in head.lower()


@pytest.mark.parametrize("origin", [None, "http://example.test"])
def test_options_star_is_a_preflight_as_llama_server_answers_it(server, origin):
    sent = (
        b"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        + (f"Origin: {origin}\r\n".encode() if origin else b"")
        + b"\r\n"
    )
    head, _, body = _raw_exchange(server.url, sent).partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    assert lines[0].split()[1] == "200" and body == b""
    assert headers["Access-Control-Allow-Origin"] == (origin or "")
    assert headers["Access-Control-Allow-Methods"] == "GET, POST, DELETE, OPTIONS"


def test_options_star_from_an_origin_cors_origin_leaves_out_is_refused_as_every_preflight_is(start_server):
    restricted = start_server(cors_origins=("http://localhost:5173",))
    for origin, status in (("http://localhost:5173", "200"), ("http://evil.example", "403")):
        sent = f"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\nOrigin: {origin}\r\n\r\n".encode()
        head, _, body = _raw_exchange(restricted.url, sent).partition(b"\r\n\r\n")
        assert head.split()[1].decode() == status, head
        path_preflight = call(restricted.url, "OPTIONS", "/v1/responses", headers={"Origin": origin})
        assert str(path_preflight[0]) == status
        if status == "403":
            assert _error(body) == _error(path_preflight[2])  # the same refusal, word for word


@pytest.mark.parametrize(
    "path", ["/health", "/v1/models", "/props", "/fixed/v1/models", "/", "/_mockllama/scenarios.json"]
)
def test_head_on_a_get_route_answers_like_get_without_a_body(server, path):
    get_status, get_headers, get_body = call(server.url, "GET", path)
    head = _raw_exchange(server.url, f"HEAD {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    head_lines, _, body = head.partition(b"\r\n\r\n")
    assert body == b""
    assert int(head_lines.split()[1]) == get_status == 200
    headers = dict(line.split(": ", 1) for line in head_lines.decode().split("\r\n")[1:])
    assert int(headers["Content-Length"]) == len(get_body)
    assert headers["Content-Type"] == get_headers["Content-Type"]


# The Host header: any by default, as llama-server; --allowed-host restricts it


@pytest.mark.parametrize("path", ["/health", "/v1/models", "/", "/_mockllama/scenarios.json"])
def test_allowed_hosts_refuse_other_host_names(start_server, path):
    guarded = start_server(allowed_hosts=("localhost", "127.0.0.1"))
    port = urlsplit(guarded.url).port
    for host in (f"127.0.0.1:{port}", f"LOCALHOST:{port}", "localhost"):
        assert call(guarded.url, "GET", path, headers={"Host": host})[0] == 200, host
    for host in (f"evil.example:{port}", "attacker.test", f"127.0.0.2:{port}"):
        status, headers, body = call(guarded.url, "GET", path, headers={"Host": host})
        assert status == 403, host
        error = _error(body)
        assert error["type"] == "permission_error" and "--allowed-host" in error["message"]


def test_allowed_hosts_guard_the_replay_routes_too(start_server):
    guarded = start_server(allowed_hosts=("localhost",))
    status, _, body = call(guarded.url, "POST", "/v1/responses", json.dumps(SEED).encode(), {"Host": "rebound.example"})
    assert status == 403 and _error(body)["code"] == 403
    status, _, body = call(guarded.url, "POST", "/v1/responses", json.dumps(SEED).encode(), {"Host": "localhost"})
    assert status == 200 and json.loads(body)["status"] == "completed"


def test_a_request_for_another_host_is_refused_before_anything_is_done_for_it(start_server):
    guarded = start_server(allowed_hosts=("localhost",))
    port = urlsplit(guarded.url).port
    allowed = {"Host": f"localhost:{port}"}
    assert call(guarded.url, "POST", "/v1/responses", json.dumps(SEED).encode(), allowed)[0] == 200
    for method, path, body in [
        ("POST", "/v1/responses", json.dumps(SEED).encode()),
        ("GET", "/nowhere", None),
        ("DELETE", "/_mockllama/journal", None),
    ]:
        status, headers, reply = call(guarded.url, method, path, body, {"Host": "rebound.example"})
        assert status == 403 and _error(reply)["type"] == "permission_error", (method, path)
        assert headers["X-Mockllama-Behaviour"] == "buggy"
    # OPTIONS * too: a page on the rebound name gets no preflight
    refused = _raw_exchange(guarded.url, b"OPTIONS * HTTP/1.1\r\nHost: rebound.example\r\nConnection: close\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 403"), refused
    # a method llama-server does not know still gets its own 400 first, whatever the host
    unknown = _raw_exchange(guarded.url, b"TRACE / HTTP/1.1\r\nHost: rebound.example\r\nConnection: close\r\n\r\n")
    assert unknown.startswith(b"HTTP/1.1 400"), unknown
    status, _, journal = call(guarded.url, "GET", "/_mockllama/journal", headers=allowed)
    # only the allowed request: no refused one was journalled, and the refused DELETE cleared nothing
    assert status == 200 and [entry["path"] for entry in json.loads(journal)["entries"]] == ["/v1/responses"]


def test_any_host_is_answered_by_default_as_llama_server_does(server):
    assert call(server.url, "GET", "/health", headers={"Host": "anything.example"})[0] == 200


def test_serve_help_offers_allowed_host():
    result = subprocess.run([*MOCKLLAMA, "serve", "--help"], capture_output=True, text=True)
    assert "--allowed-host" in result.stdout and "rebinding" in result.stdout


# "stream" that is neither a boolean nor null: llama-server's own 400, even for a recorded request


@pytest.mark.parametrize(
    ("stream", "kind"), [("yes", "string"), (1, "number"), ({}, "object"), ([], "array"), ("true", "string")]
)
@pytest.mark.parametrize("path", ["/v1/responses", "/fixed/v1/chat/completions"])
def test_a_stream_that_is_not_a_boolean_gets_llama_servers_400(server, scenarios, path, stream, kind):
    recorded = scenarios["text-cut-8"].find("POST", path.removeprefix("/fixed"), False).request_json
    status, _, body = post_json(server.url, path, {**recorded, "stream": stream})
    assert status == 400
    assert (
        _error(body)["message"]
        == f"Field 'stream': [json.exception.type_error.302] type must be boolean, but is {kind}"
    )


@pytest.mark.parametrize("path", ["/v1/responses", "/v1/chat/completions"])
def test_a_null_stream_is_the_non_streamed_recording(server, scenarios, path):
    recorded = scenarios["text-cut-8"].find("POST", path, False)
    status, headers, body = post_json(server.url, path, {**recorded.request_json, "stream": None})
    assert status == 200 and body == recorded.body
