"""--pace: a stream replayed with the recording's own timing, or scaled.

Pacing promises a spacing: the first event after ``prompt_ms``, then each delta after the first
``predicted_ms / (deltas - 1)`` after the one before, against deadlines so that waits never add
up. The expected schedule is built here from the cassette YAML itself (not from
``mockllama.server.steps.pacing``), and each event's arrival on the socket is checked against it:

- never early: no event may arrive before its due time (1 ms for clock rounding). A busy machine
  can only delay an event, so this bound is strict and still holds under load;
- the spacing of the deltas is the recorded one within 10% (+0.5 ms): measured as the median of
  the slopes between every pair of deltas (Theil-Sen), which a whole stream arriving late, or a
  few events held up and then read together, leaves unchanged;
- no event is later than LATE_S: a guard against a stalled or drifting stream. With four busy
  loops on top of the usual load (load average 14 on this 2-core machine), the worst event came
  140 ms late, and the slope stayed within 6% of the recorded spacing.
"""

from __future__ import annotations

import itertools
import json
import socket
import statistics
import time
from urllib.parse import urlsplit

import pytest

from mockllama.server.steps import pacing
from mockllama.server.steps.pacing import parse_pace
from support import yamlkit
from support.httpkit import call, request_bytes
from support.recordings import SCENARIOS

EARLY_S = 0.001
LATE_S = 0.25
# Event kinds that carry generated text or arguments, as llama-server names them.
RESPONSES_DELTAS = ("response.output_text.delta", "response.function_call_arguments.delta")


def _is_delta(payload: dict) -> bool:
    if payload.get("type") in RESPONSES_DELTAS:
        return True
    return any(
        c.get("delta", {}).get("content") or c.get("delta", {}).get("tool_calls") for c in payload.get("choices", [])
    )


def _yaml_timings(name: str, path: str, stream: bool) -> dict:
    """The reply's own timings; a Responses body has none, and borrows its chat twin's."""
    try:
        return yamlkit.timings(name, path, stream)
    except StopIteration:
        return yamlkit.timings(name, "/v1/chat/completions", stream)


def _deltas(name: str, path: str) -> list[bool]:
    """For each block of the recorded stream: does it carry a delta?"""
    blocks = [b for b in yamlkit.find(name, path, True).body.split("\n\n") if b.strip()]
    return [
        any(line.startswith("data: {") and _is_delta(json.loads(line[6:])) for line in b.split("\n")) for b in blocks
    ]


def _schedule(name: str, path: str, factor: float) -> list[float]:
    """Seconds after the request at which each recorded block is due."""
    timings = _yaml_timings(name, path, True)
    deltas = _deltas(name, path)
    per_delta_ms = timings["predicted_ms"] / (sum(deltas) - 1)
    due, seen, schedule = timings["prompt_ms"], False, []
    for delta in deltas:
        if delta and seen:
            due += per_delta_ms
        seen = seen or delta
        schedule.append(due / 1000 / factor)
    return schedule


def _timed_chunks(url: str, path: str, body: bytes) -> tuple[list[float], list[bytes]]:
    """Each HTTP chunk of a streamed reply and when it arrived, in seconds after the request."""
    parts = urlsplit(url)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {parts.hostname}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    arrivals, chunks, buffer, in_body = [], [], b"", False
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        started = time.perf_counter()
        sock.sendall(head + body)
        while piece := sock.recv(65536):
            now = time.perf_counter() - started
            buffer += piece
            if not in_body and b"\r\n\r\n" in buffer:
                buffer, in_body = buffer.partition(b"\r\n\r\n")[2], True
            while in_body and b"\r\n" in buffer:
                size_line, _, rest = buffer.partition(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                if size == 0 or len(rest) < size + 2:
                    break
                chunks.append(rest[:size])
                arrivals.append(now)
                buffer = rest[size + 2 :]
    return arrivals, chunks


def _check_paced(arrivals: list[float], schedule: list[float], deltas: list[bool], per_delta_s: float):
    assert len(arrivals) == len(schedule)
    for index, (arrived, due) in enumerate(zip(arrivals, schedule, strict=True)):
        assert arrived >= due - EARLY_S, f"event {index} came {1000 * (due - arrived):.1f} ms early"
        assert arrived <= due + LATE_S, f"event {index} came {1000 * (arrived - due):.1f} ms late"
    times = [t for t, delta in zip(arrivals, deltas, strict=True) if delta]
    slopes = [(times[j] - times[i]) / (j - i) for i, j in itertools.combinations(range(len(times)), 2)]
    spacing = statistics.median(slopes)
    assert abs(spacing - per_delta_s) <= 0.1 * per_delta_s + 0.0005, (spacing, per_delta_s)


@pytest.mark.parametrize("name", ["text-cut-64", "poem-finishes", "tool-cut-20"])
@pytest.mark.parametrize("path", ["/v1/responses", "/v1/chat/completions"])
@pytest.mark.parametrize("factor", [1.0, 2.0])
def test_every_event_keeps_the_recorded_spacing(start_server, name, path, factor):
    server = start_server(pace=factor)
    recorded = yamlkit.find(name, path, True)
    arrivals, chunks = _timed_chunks(
        server.url, f"/buggy{path}", request_bytes(SCENARIOS[name].find("POST", path, True))
    )
    assert b"".join(chunks).decode() == recorded.body
    deltas = _deltas(name, path)
    timings = _yaml_timings(name, path, True)
    per_delta_s = timings["predicted_ms"] / (sum(deltas) - 1) / 1000 / factor
    _check_paced(arrivals, _schedule(name, path, factor), deltas, per_delta_s)


def test_instant_is_the_default_and_does_not_wait(server):
    interaction = SCENARIOS["poem-finishes"].find("POST", "/v1/responses", True)
    started = time.perf_counter()
    status, _, body = call(server.url, "POST", "/fixed/v1/responses", request_bytes(interaction))
    assert status == 200 and body
    assert time.perf_counter() - started < _schedule("poem-finishes", "/v1/responses", 1.0)[-1] / 5


def test_paced_fixed_stream_still_arrives_one_event_per_chunk(start_server):
    server = start_server(pace=4.0)
    interaction = SCENARIOS["tool-cut-20"].find("POST", "/v1/responses", True)
    fixed = call(server.url, "POST", "/fixed/v1/responses", request_bytes(interaction))[2]
    _, chunks = _timed_chunks(server.url, "/fixed/v1/responses", request_bytes(interaction))
    assert b"".join(chunks) == fixed
    assert all(chunk.endswith(b"\n\n") and chunk.count(b"\n\n") == 1 for chunk in chunks)


@pytest.mark.parametrize("path", ["/v1/responses", "/v1/chat/completions"])
def test_non_streamed_reply_waits_the_recorded_total(start_server, path):
    server = start_server(pace=1.0)
    timings = _yaml_timings("poem-finishes", path, False)  # a Responses body borrows its chat twin's
    expected = (timings["prompt_ms"] + timings["predicted_ms"]) / 1000
    interaction = SCENARIOS["poem-finishes"].find("POST", path, False)
    started = time.perf_counter()
    status, _, _ = call(server.url, "POST", path, request_bytes(interaction))
    elapsed = time.perf_counter() - started
    assert status == 200
    assert expected - EARLY_S <= elapsed <= expected + LATE_S


@pytest.mark.parametrize(("text", "factor"), [("instant", None), ("recorded", 1.0), ("2", 2.0), ("0.5", 0.5)])
def test_parse_pace(text, factor):
    assert parse_pace(text) == factor


@pytest.mark.parametrize("text", ["fast", "0", "-1", "", "nan"])
def test_parse_pace_refuses_nonsense(text):
    with pytest.raises(ValueError, match="pace must be"):
        parse_pace(text)


@pytest.mark.parametrize("text", ["1e-300", "0.0009", "inf", "1e999"])
def test_a_pace_so_slow_that_no_stream_ends_or_not_a_finite_number_is_refused(text):
    """Issue 55 item 13: 1e-300 made every wait of a paced stream longer than any test runs."""
    with pytest.raises(ValueError, match="a number from 0.001 up"):
        parse_pace(text)


def test_the_slowest_pace_is_a_thousand_times_slower_than_recorded():
    assert pacing.MIN_PACE == 0.001 and parse_pace("0.001") == pacing.MIN_PACE
