"""Replies with more than one output item, on real recordings (catalogue ``multi-item``).

llama-server b11434, asked to write two files with ``parallel_tool_calls: true``, answers with two
``function_call`` items; at ``max_output_tokens`` 70 it is cut inside the SECOND call (its chat
twin says ``length``). So ``fixed`` must leave the first item ``completed`` and mark only the
second ``incomplete``, and ``spec`` must number the two items' events with ``output_index`` 0 and 1.
Expected values come from the cassette YAML (tests/support/yamlkit.py), not from mockllama's loader.
"""

from __future__ import annotations

import json

import pytest

from support import yamlkit
from support.httpkit import call, request_bytes, sse_pairs
from support.openresponses_schema import event_errors, response_errors
from support.recordings import SCENARIOS

FINISHED, CUT = "tool-two-calls-finishes", "tool-two-calls-cut-70"
EXPECTED_STATUSES = {FINISHED: ["completed", "completed"], CUT: ["completed", "incomplete"]}


def _recorded_items(name: str) -> list[dict]:
    return yamlkit.find(name, "/v1/responses", False).json()["output"]


def _post(server, behaviour: str, name: str, stream: bool):
    interaction = SCENARIOS[name].find("POST", "/v1/responses", stream)
    status, _, body = call(server.url, "POST", f"/{behaviour}/v1/responses", request_bytes(interaction))
    assert status == 200
    return sse_pairs(body) if stream else json.loads(body)


def test_the_recordings_hold_two_calls_and_the_cut_falls_inside_the_second():
    """What the tests below rely on, read from the YAML: two function calls each, the first
    identical in both replies, the cut one's second call a strict prefix of the finished one's."""
    finished, cut = _recorded_items(FINISHED), _recorded_items(CUT)
    assert [item["type"] for item in finished] == [item["type"] for item in cut] == ["function_call"] * 2
    assert cut[0]["arguments"] == finished[0]["arguments"]
    json.loads(finished[1]["arguments"])  # the finished second call is whole JSON
    assert finished[1]["arguments"].startswith(cut[1]["arguments"]) and cut[1]["arguments"] != finished[1]["arguments"]
    assert yamlkit.chat_finish_reason(CUT, False) == yamlkit.chat_finish_reason(CUT, True) == "length"
    assert yamlkit.chat_finish_reason(FINISHED, False) == "tool_calls"
    # llama-server's own bug, in both: every item and the reply say completed
    assert [item["status"] for item in cut] == ["completed", "completed"]


@pytest.mark.parametrize("name", [FINISHED, CUT])
def test_fixed_body_marks_only_the_cut_item_incomplete(server, name):
    body = _post(server, "fixed", name, False)
    assert [item["status"] for item in body["output"]] == EXPECTED_STATUSES[name]
    assert body["status"] == EXPECTED_STATUSES[name][-1]
    assert [item["id"] for item in body["output"]] == [item["id"] for item in _recorded_items(name)]


@pytest.mark.parametrize("name", [FINISHED, CUT])
def test_fixed_stream_marks_only_the_cut_item_incomplete(server, name):
    pairs = _post(server, "fixed", name, True)
    done = [data["item"] for event, data in pairs if event == "response.output_item.done"]
    assert [item["status"] for item in done] == EXPECTED_STATUSES[name]
    terminal = pairs[-1][1]["response"]
    assert [item["status"] for item in terminal["output"]] == EXPECTED_STATUSES[name]
    assert pairs[-1][0] == ("response.incomplete" if name == CUT else "response.completed")


@pytest.mark.parametrize("name", [FINISHED, CUT])
def test_fixed_stream_closes_each_call_with_its_own_arguments(server, name):
    """One function_call_arguments.done per call, just before that call's output_item.done,
    carrying that call's deltas only (not the other call's)."""
    pairs = _post(server, "fixed", name, True)
    recorded = yamlkit.find(name, "/v1/responses", True).events()
    ids = [e["item"]["id"] for e in recorded if e["type"] == "response.output_item.done"]
    for item_id in ids:
        deltas = "".join(
            d["delta"] for e, d in pairs if e == "response.function_call_arguments.delta" and d["item_id"] == item_id
        )
        (position,) = [
            n for n, (e, d) in enumerate(pairs) if e == "response.output_item.done" and d["item"]["id"] == item_id
        ]
        before, arguments_done = pairs[position - 1]
        assert before == "response.function_call_arguments.done"
        assert arguments_done["item_id"] == item_id
        assert arguments_done["arguments"] == deltas == pairs[position][1]["item"]["arguments"]
    assert [e for e, _ in pairs].count("response.function_call_arguments.done") == 2


@pytest.mark.parametrize("name", [FINISHED, CUT])
def test_spec_numbers_each_event_with_its_items_output_index(server, name):
    """output_index is the item's position in the reply's output: 0 for every event of the first
    call, 1 for every event of the second (items ordered as the YAML's output_item.added events)."""
    pairs = _post(server, "spec", name, True)
    recorded = yamlkit.find(name, "/v1/responses", True).events()
    order = [e["item"]["id"] for e in recorded if e["type"] == "response.output_item.added"]
    assert len(order) == 2
    seen = []
    for event, data in pairs:
        item_id = data["item"]["id"] if "item" in data else data.get("item_id")
        if item_id is None:
            assert "output_index" not in data, event
            continue
        assert data["output_index"] == order.index(item_id), (event, item_id)
        seen.append(data["output_index"])
    assert seen.count(0) > 1 and seen.count(1) > 1
    # llama-server sends both output_item.done events at the end, after the second call's deltas:
    # so the index must follow the item's id, not "the item most recently added".
    kinds = [event for event, _ in pairs]
    assert kinds.index("response.output_item.done") > len(kinds) - 1 - kinds[::-1].index("response.output_item.added")
    assert [d["output_index"] for e, d in pairs if e == "response.output_item.done"] == [0, 1]
    assert [data["sequence_number"] for _, data in pairs] == list(range(len(pairs)))
    terminal = pairs[-1][1]["response"]
    assert [item["id"] for item in terminal["output"]] == order
    assert [item["status"] for item in terminal["output"]] == EXPECTED_STATUSES[name]


@pytest.mark.parametrize("name", [FINISHED, CUT])
def test_spec_two_item_replies_follow_the_open_responses_document(server, name):
    for event, data in _post(server, "spec", name, True):
        assert event_errors(data) == [], event
        if "response" in data:
            assert response_errors(data["response"]) == [], event
    body = _post(server, "spec", name, False)
    assert response_errors(body) == []
    assert [item["status"] for item in body["output"]] == EXPECTED_STATUSES[name]
