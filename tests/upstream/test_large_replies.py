"""`serve --upstream` and large replies: written off the event loop, held once, within a budget.

Issue 47 items 6 and 7: writing a 60 MB recording stalled every other client for 2.0 s; a 65 MB
reply peaked at 507 MB; six concurrent 60 MB misses at 1.29 GB. The upstream is a test double of
llama-server b11434 (tests/support/doubles/llama_server.py): its real recordings, with the
/v1/responses reply grown to the size a test needs.
"""

from __future__ import annotations

import http.client
import json
import threading

import pytest

from mockllama.app import create_app
from mockllama.recordings.cassettes import load_cassette
from mockllama.server.background import BackgroundServer
from mockllama.upstream import record_on_miss
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.proxy import RECORDER
from mockllama.upstream.record_on_miss import RecordOnMiss
from support.doubles.llama_server import answering_responses_with, grown_reply
from support.httpkit import call
from support.recordings import SCENARIOS
from support.waiting import wait_for

REQUEST = json.dumps(SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False).request_json).encode()
BIG = 16 * 1024 * 1024
NEW = {"X-Mockllama-Scenario": "big"}  # a miss: no scenario has that name yet


@pytest.fixture
def proxy(tmp_path):
    running = []

    def start(upstream_url: str, **options) -> BackgroundServer:
        recording = RecordOnMiss(parse_upstream(upstream_url), tmp_path / "recorded", **options)
        running.append(BackgroundServer(create_app(dict(SCENARIOS), record_on_miss=recording)).start())
        return running[-1]

    yield start
    for server in reversed(running):
        server.stop()


def settle(server: BackgroundServer, seconds: float = 60) -> None:
    assert wait_for(lambda: not server.app[RECORDER].in_flight, seconds)


def _answered_within(url: str, seconds: float) -> tuple[int, bytes]:
    """A replayed request (text-cut-8, by name) on a fresh connection that gives up after ``seconds``."""
    port = int(url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=seconds)
    try:
        connection.request("POST", "/buggy/v1/responses", body=b'{"model": "text-cut-8"}')
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_another_client_is_answered_while_a_large_recording_is_written(proxy, tmp_path, monkeypatch):
    """The write is held open (a stand-in for a slow disk) until the other client has its answer:
    on the event loop, that client would wait for the write, and here for ever."""
    writing, release = threading.Event(), threading.Event()
    real = record_on_miss.save_cassette

    def held(*args, **kwargs):
        writing.set()
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(record_on_miss, "save_cassette", held)
    big = grown_reply(BIG)
    with BackgroundServer(answering_responses_with(big)) as up:
        mock = proxy(up.url)
        try:
            status, headers, body = call(mock.url, "POST", "/buggy/v1/responses", REQUEST, NEW)
            assert (status, headers["X-Mockllama-Selected-By"], body) == (200, "upstream", big)
            assert writing.wait(30)
            status, replayed = _answered_within(mock.url, 5)
            assert status == 200 and json.loads(replayed)["id"]
        finally:
            release.set()
        settle(mock)
    assert load_cassette(tmp_path / "recorded" / "big.yaml").interactions[0].body == big
