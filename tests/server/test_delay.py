"""``--delay MS``: every replayed reply waits that long before its head; 0 leaves the fast path alone."""

from __future__ import annotations

import json
import time

import pytest

from mockllama.server.app import OUTGOING_STEPS, SETTINGS, answer_to
from mockllama.server.faults import FAULT_PLAN
from mockllama.server.steps.delay import DelayStep
from support.httpkit import call
from support.recordings import SCENARIOS

COUNT = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False).request_json
DELAY_MS = 400


def _timed(url: str, body: dict, headers: dict | None = None) -> tuple[float, int, bytes]:
    started = time.monotonic()
    status, _, payload = call(url, "POST", "/fixed/v1/responses", json.dumps(body).encode(), headers or {})
    return time.monotonic() - started, status, payload


@pytest.mark.parametrize("stream", [False, True])
def test_every_replayed_reply_waits_the_delay_and_is_otherwise_the_same(start_server, server, stream):
    body = {**COUNT, "stream": stream}
    delayed = start_server(delay=DELAY_MS)
    took, status, payload = _timed(delayed.url, body)
    _, status_at_once, at_once = _timed(server.url, body)
    assert took >= DELAY_MS / 1000
    assert (status, payload) == (status_at_once, at_once)


def test_a_fault_s_own_wait_comes_on_top_of_the_delay(start_server):
    delayed = start_server(delay=DELAY_MS)
    took, status, _ = _timed(delayed.url, COUNT, {"X-Mockllama-Fault": "stall=300"})
    assert status == 200 and took >= (DELAY_MS + 300) / 1000


def test_mockllama_s_own_errors_are_not_delayed(start_server):
    delayed = start_server(delay=5000)
    took, status, _ = _timed(delayed.url, {**COUNT, "input": "nothing was recorded for this"})
    assert status == 404 and took < 5


def test_without_a_delay_no_step_applies_and_the_plain_reply_goes_out_whole(start_server):
    """The default keeps the JSON fast path: the delay step says it does not apply."""
    for delay, whole in ((0, True), (1, False)):
        app = start_server(delay=delay).app
        steps = app[OUTGOING_STEPS]
        assert isinstance(steps[0], DelayStep)
        settings = app[SETTINGS]
        selection = settings.matcher.select("POST", "/v1/responses", json.dumps(COUNT).encode(), None)
        answer = answer_to(settings, app[FAULT_PLAN], steps, "fixed", selection, json.dumps(COUNT).encode(), None)
        assert answer.whole is whole
