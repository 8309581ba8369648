"""`serve --upstream` and large replies: written off the event loop, held once, within a budget.

Issue 47 items 6 and 7: writing a 60 MB recording stalled every other client for 2.0 s; a 65 MB
reply peaked at 507 MB; six concurrent 60 MB misses at 1.29 GB. The upstream is a test double of
llama-server b11434 (tests/support/doubles/llama_server.py): its real recordings, with the
/v1/responses reply grown to the size a test needs.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading

import pytest
from aiohttp import web

from mockllama.app import create_app
from mockllama.recordings.cassettes import load_cassette
from mockllama.server.background import BackgroundServer
from mockllama.upstream import cassette_writer, record_on_miss
from mockllama.upstream import options as upstream_options
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.proxy import RECORDER
from mockllama.upstream.record_on_miss import RecordOnMiss
from support.doubles.llama_server import answering_responses_with, grown_reply, llama_server_with
from support.httpkit import call, chunks_on_the_wire
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
    real = cassette_writer.save_cassette

    def held(*args, **kwargs):
        writing.set()
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(cassette_writer, "save_cassette", held)
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


# --- a large reply is spooled, and relayed and recorded byte for byte -------------------------------


@pytest.mark.parametrize("behaviour", ["buggy", "fixed"])
def test_a_reply_past_the_spool_threshold_is_relayed_and_recorded_byte_for_byte(proxy, tmp_path, behaviour):
    big = grown_reply(2 * 1024 * 1024)
    with BackgroundServer(answering_responses_with(big)) as up:
        mock = proxy(up.url, spool_threshold=64 * 1024)
        status, headers, body = call(mock.url, "POST", f"/{behaviour}/v1/responses", REQUEST, NEW)
        assert status == 200 and int(headers["Content-Length"]) == len(body)
        if behaviour == "buggy":
            assert body == big
        settle(mock)
        assert mock.app[RECORDER].budget.held == 0  # given back once written
    assert load_cassette(tmp_path / "recorded" / "big.yaml").interactions[0].body == big


def test_a_spooled_stream_reaches_its_client_block_by_block(proxy, tmp_path):
    """tool-cut-20's real stream, with 1 KiB in memory at most: each block from the file."""
    recorded = SCENARIOS["tool-cut-20"].find("POST", "/v1/responses", True)
    with BackgroundServer(create_app(SCENARIOS)) as up:
        mock = proxy(up.url, spool_threshold=1024)
        body = json.dumps(recorded.request_json).encode()
        assert chunks_on_the_wire(mock.url, "/buggy/v1/responses", body, NEW) == [e.raw for e in recorded.events]
        settle(mock)
    assert load_cassette(tmp_path / "recorded" / "big.yaml").interactions[0].body == recorded.body


# --- the budget all replies in flight share ----------------------------------------------------------


BUDGET = 512 * 1024


def _refused_for_the_budget(status: int, body: bytes) -> str:
    error = json.loads(body)["error"]
    assert (status, error["code"], error["type"]) == (503, 503, "unavailable_error"), error
    message = error["message"]
    assert f"past the {BUDGET} bytes that all replies in flight may hold" in message
    assert "nothing was recorded" in message
    return message


@pytest.mark.parametrize("behaviour", ["buggy", "fixed"])
def test_a_reply_larger_than_the_budget_is_refused_in_llama_servers_shape(proxy, tmp_path, behaviour):
    with BackgroundServer(answering_responses_with(grown_reply(2 * BUDGET))) as up:
        mock = proxy(up.url, reply_budget=BUDGET)
        status, _, body = call(mock.url, "POST", f"/{behaviour}/v1/responses", REQUEST, NEW)
        _refused_for_the_budget(status, body)
        settle(mock)
        assert mock.app[RECORDER].budget.held == 0
    assert list((tmp_path / "recorded").glob("*.yaml")) == []


class HeldHalfway:
    """A double answering /v1/responses with ``body`` (its length said up front): for a request
    whose input says "hold", the first ``part`` bytes, then the rest once ``release()``."""

    def __init__(self, body: bytes, part: int):
        self.body, self.part = body, part
        self.sent_part, self.released = threading.Event(), threading.Event()

    def app(self):
        async def replace(request, body):
            if request.path != "/v1/responses":
                return None
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            response.content_length = len(self.body)
            await response.prepare(request)
            if "hold" in str(body.get("input")):
                await response.write(self.body[: self.part])
                self.sent_part.set()
                while not self.released.is_set():
                    await asyncio.sleep(0.02)
                await response.write(self.body[self.part :])
            else:
                await response.write(self.body)
            await response.write_eof()
            return response

        return llama_server_with(replace)


def test_concurrent_misses_share_one_budget(proxy, tmp_path):
    """A reply in flight holds its bytes until it is written: a second miss that would pass the
    budget meanwhile is refused, and the same miss is taken once the first is written."""
    reply = grown_reply(BUDGET * 6 // 10)
    double = HeldHalfway(reply, BUDGET // 2)
    with BackgroundServer(double.app()) as up:
        mock = proxy(up.url, reply_budget=BUDGET)
        held = {**json.loads(REQUEST), "input": "hold this one"}
        first = []
        waiting = threading.Thread(
            target=lambda: first.append(call(mock.url, "POST", "/fixed/v1/responses", json.dumps(held).encode(), NEW))
        )
        waiting.start()
        try:
            assert double.sent_part.wait(10)
            assert wait_for(lambda: mock.app[RECORDER].budget.held >= BUDGET // 2)
            other = {"X-Mockllama-Scenario": "other"}
            status, _, body = call(mock.url, "POST", "/fixed/v1/responses", REQUEST, other)
            _refused_for_the_budget(status, body)
        finally:
            double.released.set()
        waiting.join(30)
        assert first[0][0] == 200
        settle(mock)
        status, _, body = call(mock.url, "POST", "/fixed/v1/responses", REQUEST, other)
        assert status == 200, body[:300]
    assert sorted(p.name for p in (tmp_path / "recorded").glob("*.yaml")) == ["big.yaml", "other.yaml"]


def test_the_budget_and_the_shutdown_grace_are_options_of_serve_and_the_plugin():
    """--reply-budget and --shutdown-grace reach the recorder, as every other recording option does."""
    options = upstream_options.RecordingOptions(upstream="http://127.0.0.1:9", reply_budget=1234, shutdown_grace=1.5)
    recording = record_on_miss.record_on_miss(options)
    assert (recording.reply_budget, recording.shutdown_grace) == (1234, 1.5)
