"""Outgoing steps (server.steps): each says whether it applies to an answer; a reply none applies
to is sent as it is, and a step that applies is never skipped, not even by a plain JSON reply,
unless it keeps the fast path, when it shapes a plain body once. The registry puts them in their
declared order, and a step changes bytes through one helper that keeps the journal right."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field, fields

import pytest

from mockllama.app import create_app
from mockllama.server.app import OUTGOING_STEPS, SETTINGS, answer_to
from mockllama.server.background import BackgroundServer
from mockllama.server.faults import FAULT_PLAN
from mockllama.server.option_fields import option
from mockllama.server.options import ReplayOptions, ServerOptions
from mockllama.server.outgoing import Outgoing
from mockllama.server.steps.delay import DelayStep
from mockllama.server.steps.fault import FaultStep
from mockllama.server.steps.pacing import PacingStep
from mockllama.server.steps.registry import STEPS, register, unregister
from mockllama.server.steps.step import FastPathBroken, Step
from support.httpkit import call, post_json
from support.recordings import SCENARIOS

PLAIN = {"model": "text-finishes", "input": "anything"}
STREAM = {**PLAIN, "stream": True}


class Marking(Step):
    """A step that marks every reply it applies to with a header, and counts how often it is asked
    and how often it shapes a reply."""

    place = 1000  # after every step of mockllama's own
    streams = bodies = True

    def __init__(self):
        self.asked = self.shaped = 0

    def applies(self, answer) -> bool:
        self.asked += 1
        return self.streams if answer.reply.events is not None else self.bodies

    def shape(self, answer, outgoing: Outgoing) -> None:
        self.shaped += 1
        outgoing.headers = {**outgoing.headers, "X-Marked": "yes"}


def marking(streams: bool = True, bodies: bool = True, **declared) -> type[Marking]:
    return type("Marking", (Marking,), {"streams": streams, "bodies": bodies, **declared})


class Shouting(Marking):
    """Marks, and upper-cases every byte through the one helper."""

    def shape(self, answer, outgoing: Outgoing) -> None:
        super().shape(answer, outgoing)
        outgoing.rewrite(bytes.upper)


@contextlib.contextmanager
def registered(step: type[Step]):
    register(step)
    try:
        yield
    finally:
        unregister(step)


@pytest.fixture
def server_with():
    """Start a server with one more outgoing step registered; returns the server and its step."""
    started = []

    def start(step: type[Step]) -> tuple[BackgroundServer, Step]:
        with registered(step):
            started.append(BackgroundServer(create_app(SCENARIOS)).start())
        return started[-1], started[-1].app[OUTGOING_STEPS][-1]

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
        (marking(bodies=False)(), False, True),
        (marking()(), False, False),
        (marking(streams=False)(), True, False),  # a stream is never sent from the handler
        (marking(keeps_fast_path=True)(), False, True),  # shaped once, here, and sent whole
        (marking(keeps_fast_path=True)(), True, False),
    ],
)
def test_a_reply_is_sent_whole_from_the_handler_only_when_no_step_applies_or_all_keep_the_fast_path(
    step, stream, whole
):
    answer = _decided(step, stream)
    assert answer.whole is whole
    assert answer.steps == ((step,) if step.applies(answer) else ())


@pytest.mark.parametrize("payload", [PLAIN, STREAM], ids=["plain", "stream"])
@pytest.mark.parametrize("fast", [False, True], ids=["per-request", "fast-path"])
def test_a_step_that_applies_changes_every_reply_even_a_plain_json_one(server_with, payload, fast):
    server, _ = server_with(marking(keeps_fast_path=fast))
    for _ in range(3):  # the answer remembered after the first: the step still applies
        status, headers, _ = post_json(server.url, "/v1/responses", payload)
        assert status == 200 and headers["X-Marked"] == "yes"


def test_a_step_that_applies_to_nothing_leaves_every_reply_as_it_was(server_with, server):
    marked, _ = server_with(marking(streams=False, bodies=False))
    for payload in (PLAIN, STREAM):
        _, headers, body = post_json(marked.url, "/v1/responses", payload)
        assert "X-Marked" not in headers and body == post_json(server.url, "/v1/responses", payload)[2]


def test_whether_a_step_applies_is_asked_once_per_answer_not_per_request(server_with):
    server, step = server_with(marking())
    for _ in range(5):
        post_json(server.url, "/v1/responses", PLAIN)
    assert step.asked == 1 and step.shaped == 5


def test_a_step_that_keeps_the_fast_path_shapes_a_plain_body_once_and_a_stream_each_time(server_with):
    server, step = server_with(marking(keeps_fast_path=True))
    for _ in range(5):
        post_json(server.url, "/v1/responses", PLAIN)
    assert step.shaped == 1
    for _ in range(2):
        post_json(server.url, "/v1/responses", STREAM)
    assert step.shaped == 3


class Waiting(Marking):
    keeps_fast_path = True

    def shape(self, answer, outgoing: Outgoing) -> None:
        outgoing.before += 1


class CuttingBytesByHand(Marking):
    keeps_fast_path = True

    def shape(self, answer, outgoing: Outgoing) -> None:
        outgoing.blocks[-1] = outgoing.blocks[-1].upper()  # not through rewrite: a cut


@pytest.mark.parametrize("step", [Waiting, CuttingBytesByHand])
def test_a_step_that_keeps_the_fast_path_but_waits_or_cuts_is_refused_when_it_first_applies(step):
    with pytest.raises(FastPathBroken, match="keeps the fast path"):
        _decided(step(), stream=False)


@pytest.mark.parametrize("fast", [False, True], ids=["per-request", "fast-path"])
def test_bytes_rewritten_through_the_helper_are_journalled_as_sent_in_full(server_with, server, fast):
    shouting, _ = server_with(type("Shouting", (Shouting,), {"keeps_fast_path": fast}))
    sent = {}
    for name, payload in (("stream", STREAM), ("plain", PLAIN)):
        _, _, sent[name] = post_json(shouting.url, "/v1/responses", payload)
        assert sent[name] == post_json(server.url, "/v1/responses", payload)[2].upper() != sent[name].lower()
    entries = json.loads(call(shouting.url, "GET", "/_mockllama/journal")[2])["entries"]
    assert [(e["stream"], e["finished"], e["bytes_sent"]) for e in entries] == [
        (True, True, len(sent["stream"])),
        (False, True, len(sent["plain"])),
    ]


def test_a_changed_reply_is_journalled_with_what_went_out(server_with):
    server, _ = server_with(marking())
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


def test_a_rewrite_keeps_a_whole_reply_whole_and_a_cut_one_cut():
    whole = Outgoing(200, None, {}, True, [b"ab", b"cd"], [b"ab", b"cd"])
    whole.rewrite(bytes.upper)
    assert whole.blocks == [b"AB", b"CD"] and whole.finished and whole.whole_size == 4
    cut = Outgoing(200, None, {}, True, [b"ab", b"cd"], [b"ab", b"cd"])
    cut.blocks[-1] = b"c"
    cut.rewrite(lambda block: block + b"!")
    assert cut.blocks == [b"ab!", b"c!"] and not cut.finished and cut.whole_size == 6


def test_the_steps_run_in_their_declared_places_and_their_options_are_the_server_s():
    assert STEPS[:3] == [DelayStep, FaultStep, PacingStep]
    assert [step.place for step in STEPS] == sorted(step.place for step in STEPS)
    declared = [f.name for step in STEPS if step.options is not None for f in fields(step.options)]
    assert [f.name for f in fields(ReplayOptions)] == [f.name for f in fields(ServerOptions)] + declared
    assert {"delay", "faults", "pace"} <= set(declared)


def test_two_steps_in_one_place_are_refused():
    with pytest.raises(ValueError, match="both take place 10"):
        register(marking(place=DelayStep.place))


def test_a_step_s_options_registered_after_they_were_assembled_are_refused():
    @dataclass(frozen=True)
    class Late:
        late: int = field(default=0, metadata=option("--late", "Too late."))

    with pytest.raises(ValueError, match="after they were assembled"):
        register(marking(options=Late))
    assert all(step.options is not Late for step in STEPS)


def test_a_step_runs_at_its_place_whatever_the_order_it_was_registered_in():
    late, early = marking(place=1001), marking(place=5)
    with registered(late), registered(early):
        assert STEPS.index(early) < STEPS.index(DelayStep) < STEPS.index(PacingStep) < STEPS.index(late)
        made = [type(step) for step in create_app(SCENARIOS)[OUTGOING_STEPS]]
        assert made.index(early) < made.index(DelayStep) < made.index(late)
