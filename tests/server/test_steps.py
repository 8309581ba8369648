"""Outgoing steps (server.steps): each says whether it applies to an answer; a reply none applies
to is sent as it is, and a step that applies is never skipped, not even by a plain JSON reply."""

from __future__ import annotations

import json

import pytest

from mockllama.app import create_app
from mockllama.server import app as server_app
from mockllama.server.app import SETTINGS, answer_to
from mockllama.server.background import BackgroundServer
from mockllama.server.faults import FAULT_PLAN
from mockllama.server.outgoing import Outgoing
from mockllama.server.steps import Step
from support.httpkit import call, post_json
from support.recordings import SCENARIOS

PLAIN = {"model": "text-finishes", "input": "anything"}
STREAM = {**PLAIN, "stream": True}


class Marking(Step):
    """A step that marks every reply it applies to with a header, and counts how often it is asked."""

    def __init__(self, applies_to_streams: bool = True, applies_to_bodies: bool = True):
        self.streams, self.bodies, self.asked = applies_to_streams, applies_to_bodies, 0

    def applies(self, answer) -> bool:
        self.asked += 1
        return self.streams if answer.reply.events is not None else self.bodies

    def shape(self, answer, outgoing: Outgoing) -> None:
        outgoing.headers = {**outgoing.headers, "X-Marked": "yes"}


@pytest.fixture
def server_with(monkeypatch):
    """Start a server with one more outgoing step, after its own, put where a new step goes."""
    started = []

    def start(step: Step) -> BackgroundServer:
        own = server_app.outgoing_steps
        monkeypatch.setattr(server_app, "outgoing_steps", lambda *args: (*own(*args), step))
        started.append(BackgroundServer(create_app(SCENARIOS)).start())
        monkeypatch.undo()
        return started[-1]

    yield start
    for running in started:
        running.stop()


def _decided(step: Step, stream: bool):
    app = create_app(SCENARIOS)
    selection = app[SETTINGS].matcher.select("POST", "/v1/responses", json.dumps({**PLAIN, "stream": stream}).encode())
    return answer_to(app[SETTINGS], app[FAULT_PLAN], (step,), "buggy", selection, b"{}", None)


@pytest.mark.parametrize(
    ("step", "stream", "whole"),
    [
        (Marking(applies_to_bodies=False), False, True),
        (Marking(), False, False),
        (Marking(applies_to_streams=False), True, False),  # a stream is never sent from the handler
    ],
)
def test_a_reply_is_sent_whole_from_the_handler_only_when_no_step_applies(step, stream, whole):
    answer = _decided(step, stream)
    assert answer.whole is whole
    assert answer.steps == ((step,) if step.applies(answer) else ())


@pytest.mark.parametrize("payload", [PLAIN, STREAM], ids=["plain", "stream"])
def test_a_step_that_applies_changes_every_reply_even_a_plain_json_one(server_with, payload):
    server = server_with(Marking())
    for _ in range(3):  # the answer remembered after the first: the step still applies
        status, headers, _ = post_json(server.url, "/v1/responses", payload)
        assert status == 200 and headers["X-Marked"] == "yes"


def test_a_step_that_applies_to_nothing_leaves_every_reply_as_it_was(server_with, server):
    marked = server_with(Marking(applies_to_streams=False, applies_to_bodies=False))
    for payload in (PLAIN, STREAM):
        _, headers, body = post_json(marked.url, "/v1/responses", payload)
        assert "X-Marked" not in headers and body == post_json(server.url, "/v1/responses", payload)[2]


def test_whether_a_step_applies_is_asked_once_per_answer_not_per_request(server_with):
    step = Marking()
    server = server_with(step)
    for _ in range(5):
        post_json(server.url, "/v1/responses", PLAIN)
    assert step.asked == 1


def test_a_changed_reply_is_journalled_with_what_went_out(server_with):
    server = server_with(Marking())
    _, _, streamed = post_json(server.url, "/v1/responses", STREAM)
    _, _, plain = post_json(server.url, "/v1/responses", PLAIN)
    entries = json.loads(call(server.url, "GET", "/_mockllama/journal")[2])["entries"]
    assert [(e["stream"], e["finished"], e["bytes_sent"], e["turn"]) for e in entries] == [
        (True, True, len(streamed), 1),
        (False, True, len(plain), 1),
    ]


def test_outgoing_knows_whether_the_whole_reply_goes_out():
    outgoing = Outgoing(200, None, {}, True, [b"ab", b"cd"], [b"ab", b"cd"])
    assert outgoing.finished and outgoing.whole_size == 4
    outgoing.blocks[-1] = b"c"
    assert not outgoing.finished
    del outgoing.blocks[-1]
    assert not outgoing.finished
