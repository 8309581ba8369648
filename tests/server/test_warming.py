"""The server gathers the 404's nearest-search candidates soon after its start, between requests,
so that its first miss does not (``server.warming``, ``Matcher.prepare_nearest``)."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest

from mockllama.app import create_app
from mockllama.matching import nearness
from mockllama.matching.matcher import Matcher
from mockllama.server import warming
from mockllama.server.background import BackgroundServer
from mockllama.wire.errors import RequestError
from support.recordings import SCENARIOS
from support.waiting import wait_for

SENT = next(i.request_json for i in SCENARIOS["text-cut-8"].interactions if i.path == "/v1/responses" and not i.stream)
MISSES = [  # (path, body): one miss on each JSON route, streamed and not
    (path, {**body, "stream": stream})
    for path, body in (
        ("/v1/responses", {**SENT, "input": "A prompt no recording holds."}),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Nothing recorded."}]}),
    )
    for stream in (False, True)
]


def _message(matcher: Matcher, path: str, body: dict) -> str:
    try:
        matcher.select("POST", path, json.dumps(body).encode())
    except RequestError as err:
        return str(err)
    raise AssertionError(f"expected a 404 for {path} {body}")


def _no_gathering(monkeypatch) -> None:
    def refuse(*_args):
        raise AssertionError("a route's candidates were gathered on a miss")

    monkeypatch.setattr(nearness.Candidates, "__init__", refuse)


def test_a_prepared_matcher_names_the_same_nearest_scenarios_without_gathering_on_a_miss(monkeypatch):
    unprepared = [_message(Matcher(dict(SCENARIOS)), path, body) for path, body in MISSES]
    matcher = Matcher(dict(SCENARIOS))
    prepared = list(matcher.prepare_nearest())
    assert {("POST", path, body["stream"]) for path, body in MISSES} <= set(prepared)
    assert all(method != "GET" for method, _, _ in prepared)
    _no_gathering(monkeypatch)
    assert [_message(matcher, path, body) for path, body in MISSES] == unprepared
    assert "Nearest scenario" in unprepared[0]


def test_the_server_prepares_its_nearest_search_soon_after_its_start(monkeypatch):
    monkeypatch.setattr(warming, "PREPARE_AFTER_S", 0.0)
    prepared, steps = [], Matcher.prepare_nearest
    monkeypatch.setattr(
        Matcher, "prepare_nearest", lambda self: (prepared.append(step) or step for step in steps(self))
    )
    with BackgroundServer(create_app(dict(SCENARIOS))) as server:
        # each route is yielded once it is gathered; the routes come in the recordings' order
        wait_for(lambda: {("POST", path, body["stream"]) for path, body in MISSES} <= set(prepared), 30)
        _no_gathering(monkeypatch)
        for path, body in MISSES:
            request = urllib.request.Request(
                server.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
            )
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=30)
            assert refused.value.code == 404
            assert "Nearest scenario" in json.loads(refused.value.read())["error"]["message"]
    assert {("POST", path, body["stream"]) for path, body in MISSES} <= set(prepared)


def test_a_server_stopped_before_it_prepares_leaves_no_task_behind(monkeypatch):
    matcher = Matcher(dict(SCENARIOS))
    monkeypatch.setattr(matcher, "prepare_nearest", lambda: pytest.fail("prepared after the stop"))

    async def start_and_stop() -> None:
        context = warming.nearest_prepared_soon(matcher)(None)
        await context.__anext__()
        await asyncio.sleep(0.01)
        with pytest.raises(StopAsyncIteration):
            await context.__anext__()
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        assert all(task.cancelled() for task in others)

    asyncio.run(start_and_stop())


def test_a_preparation_that_fails_is_logged_and_the_server_carries_on(monkeypatch, caplog):
    """A recording the nearest search cannot handle fails the first miss (an error reply), not the app."""
    monkeypatch.setattr(warming, "PREPARE_AFTER_S", 0.0)

    def broken(self):
        raise ValueError("a recording the search cannot handle")
        yield

    monkeypatch.setattr(Matcher, "prepare_nearest", broken)
    with caplog.at_level("WARNING", logger="mockllama"):
        with BackgroundServer(create_app(dict(SCENARIOS))) as server:
            wait_for(lambda: "nearest search" in caplog.text, 30)
            with urllib.request.urlopen(server.url + "/health", timeout=30) as answer:
                assert answer.status == 200
    assert "could not prepare the 404's nearest search ahead of a miss: ValueError(" in caplog.text
