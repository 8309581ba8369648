"""--pace: a stream replayed with the recording's own timing, or scaled."""

from __future__ import annotations

import time

import pytest
from httpkit import call, chunks_on_the_wire, request_bytes
from recordings import SCENARIOS

from mockllama.pacing import parse_pace, recorded_timings


def _recorded_seconds(name: str, path: str, stream: bool = True) -> float:
    scenario = SCENARIOS[name]
    timings = recorded_timings(scenario, scenario.find("POST", path, stream))
    return (timings["prompt_ms"] + timings["predicted_ms"]) / 1000


def _timed(url: str, name: str, path: str) -> float:
    interaction = SCENARIOS[name].find("POST", path, True)
    started = time.perf_counter()
    status, _, body = call(url, "POST", f"/fixed{path}", request_bytes(interaction))
    assert status == 200 and body
    return time.perf_counter() - started


@pytest.mark.parametrize("name", ["text-cut-64", "poem-finishes", "tool-cut-20"])
@pytest.mark.parametrize("path", ["/v1/responses", "/v1/chat/completions"])
def test_recorded_pace_takes_the_recorded_time_within_15_percent(start_server, name, path):
    server = start_server(pace=1.0)
    expected = _recorded_seconds(name, path)
    assert abs(_timed(server.url, name, path) - expected) <= 0.15 * expected


def test_a_factor_of_two_is_twice_as_fast(start_server):
    server = start_server(pace=2.0)
    expected = _recorded_seconds("poem-finishes", "/v1/responses") / 2
    assert abs(_timed(server.url, "poem-finishes", "/v1/responses") - expected) <= 0.15 * expected


def test_instant_is_the_default_and_does_not_wait(server):
    assert _timed(server.url, "poem-finishes", "/v1/responses") < _recorded_seconds("poem-finishes", "/v1/responses") / 5


def test_paced_stream_still_arrives_one_event_per_chunk_unchanged(start_server):
    server = start_server(pace=4.0)
    interaction = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", True)
    chunks = chunks_on_the_wire(server.url, "/buggy/v1/responses", request_bytes(interaction))
    assert chunks == [event.raw for event in interaction.events]


def test_non_streamed_reply_waits_the_recorded_total(start_server):
    server = start_server(pace=1.0)
    interaction = SCENARIOS["poem-finishes"].find("POST", "/v1/responses", False)
    started = time.perf_counter()
    call(server.url, "POST", "/v1/responses", request_bytes(interaction))
    elapsed = time.perf_counter() - started
    expected = _recorded_seconds("poem-finishes", "/v1/responses", stream=False)  # the chat twin's timings
    assert abs(elapsed - expected) <= 0.15 * expected


@pytest.mark.parametrize(("text", "factor"), [("instant", None), ("recorded", 1.0), ("2", 2.0), ("0.5", 0.5)])
def test_parse_pace(text, factor):
    assert parse_pace(text) == factor


@pytest.mark.parametrize("text", ["fast", "0", "-1", ""])
def test_parse_pace_refuses_nonsense(text):
    with pytest.raises(ValueError, match="pace must be"):
        parse_pace(text)
