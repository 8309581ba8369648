"""A reply that finished is judged on every aspect a cut one is (issue 55 item 1).

A finished reply that says `status: "completed"` but carries `incomplete_details`, an
`"incomplete"` item or a cut call's missing `function_call_arguments.done` misleads a client that
reads those fields as much as a cut reply marked completed misleads one that reads the status.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from mockllama.check.reading import Seen, StreamEvent
from mockllama.check.verdicts import _judge_finished
from mockllama.server.background import BackgroundServer
from support import yamlkit
from support.doubles import finished_says_cut
from support.twins import said

MOCKLLAMA = [sys.executable, "-m", "mockllama"]


@pytest.fixture(scope="module")
def double_url(server):
    double = BackgroundServer(finished_says_cut.create_app(server.url)).start()
    yield double.url
    double.stop()


def test_finished_replies_that_say_cut_beside_a_completed_status_are_dishonest(double_url):
    result = subprocess.run(
        [*MOCKLLAMA, "check", double_url, "--probe", "responses", "--json"], capture_output=True, text=True, timeout=120
    )
    report = json.loads(result.stdout)
    assert (result.returncode, report["verdict"]) == (1, "dishonest"), report["summary"]
    assert {probe["verdict"] for probe in report["probes"]} == {"honest"}  # the cut replies are fixed's
    for probe in report["probes"]:
        finished = {a["name"]: a["verdict"] for a in probe["finished"]["aspects"]}
        assert finished["status"] == "honest"
        assert finished["incomplete_details.reason"] == "dishonest"
        assert finished["items.status"] == "dishonest"
    assert report["summary"] == (
        f"{double_url}: a reply that finished inside its limit is reported as cut by: incomplete_details.reason, "
        "item status."
    )


def _finished(name: str, stream: bool = False) -> Seen:
    reply = copy.deepcopy(yamlkit.find(name, "/v1/responses", False).json())
    if not stream:
        return Seen(reply)
    terminal = StreamEvent("response.completed", {"type": "response.completed", "response": reply})
    done = {item["id"]: item["arguments"] for item in reply["output"] if item["type"] == "function_call"}
    return Seen(reply, terminal, done, (terminal,))


def _verdicts(seen: Seen, reason: str = "tool_calls") -> dict[str, str]:
    return {aspect.name: aspect.verdict for aspect in _judge_finished(seen, said(reason))[2]}


def _changed(seen: Seen) -> dict[str, str]:
    return {name: verdict for name, verdict in _verdicts(seen).items() if verdict not in ("honest", "not applicable")}


def test_a_finished_stream_as_recorded_is_honest_in_every_aspect():
    assert _verdicts(_finished("tool-finishes", stream=True)) == {
        "status": "honest",
        "incomplete_details.reason": "honest",
        "items.status": "honest",
        "completed_at": "honest",
        "terminal_event": "honest",
        "function_call_arguments.done": "honest",
    }


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"incomplete_details": {"reason": "max_output_tokens"}}, {"incomplete_details.reason": "dishonest"}),
        ({"incomplete_details": {}}, {"incomplete_details.reason": "dishonest"}),
        ({"incomplete_details": None}, {}),
        ({"completed_at": None}, {}),
        ({"completed_at": "soon"}, {"completed_at": "wrong"}),
    ],
)
def test_one_top_level_field_of_a_finished_reply_changed_fails_that_aspect_alone(change, expected):
    seen = _finished("tool-finishes", stream=True)
    seen.response.update(change)
    assert _changed(seen) == expected


def test_a_finished_reply_without_completed_at_is_honest():
    """llama-server's streams never carry one, and no client reads a cut from its absence."""
    seen = _finished("text-finishes", stream=True)
    del seen.response["completed_at"]
    assert _changed(seen) == {}


@pytest.mark.parametrize(
    ("status", "expected"), [("incomplete", "dishonest"), ("in_progress", "wrong"), (None, "wrong")]
)
@pytest.mark.parametrize("position", [0, -1])
def test_every_item_of_a_finished_reply_must_say_completed(status, expected, position):
    seen = _finished("tool-two-calls-finishes")
    item = seen.response["output"][position]
    if status is None:
        del item["status"]
    else:
        item["status"] = status
    assert _changed(seen) == {"items.status": expected}


def test_a_finished_call_without_its_arguments_done_is_wrong():
    seen = _finished("tool-finishes", stream=True)
    seen.arguments_done.clear()
    assert _changed(seen) == {"function_call_arguments.done": "wrong"}
    assert _verdicts(_finished("tool-finishes"))["function_call_arguments.done"] == "not applicable"
