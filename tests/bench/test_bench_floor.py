"""The benchmark's floor, and the same replies from aiohttp's low-level server, send the same bytes
as mockllama buggy, head and body, for both workloads: "x the floor" then counts mockllama's work
per request, not what it sends (docs/performance.md)."""

from __future__ import annotations

import http.client

import pytest

from benchmarks.harness import Contender, floor_command, free_port, mockllama_command, request_body, start_contender
from mockllama.wire.routes import RESPONSES_PATH


@pytest.fixture(scope="module")
def servers():
    started = []
    try:
        for command in (floor_command, lambda port: floor_command(port, low_level=True), mockllama_command):
            port = free_port()
            process, _ = start_contender(Contender("contender", command(port), port), pinned=False)
            started.append((process, port))
        yield [port for _, port in started]
    finally:
        for process, _ in started:
            process.terminate()
            process.wait(timeout=10)


def _exchange(port: int, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", RESPONSES_PATH, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        headers = [(name, value) for name, value in response.getheaders() if name != "Date"]
        return response.status, headers, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("scenario, stream", [("text-cut-8", False), ("poem-finishes", True)])
def test_the_floor_and_the_low_level_server_send_what_mockllama_buggy_sends(servers, scenario, stream):
    floor, low_level, mockllama = servers
    body = request_body(scenario, stream)
    sent = _exchange(mockllama, body)
    assert _exchange(floor, body) == sent
    assert _exchange(low_level, body) == sent


def test_the_low_level_server_answers_any_other_request_with_a_404_as_the_floor_does(servers):
    floor, low_level, _ = servers
    for port in (floor, low_level):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            connection.request("GET", "/v1/models")
            assert connection.getresponse().status == 404
        finally:
            connection.close()
