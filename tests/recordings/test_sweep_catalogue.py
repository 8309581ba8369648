"""A catalogue scenario swept at every limit: how it is written, and what is refused."""

from __future__ import annotations

import pytest

from mockllama.recordings.catalogue import CatalogueError, Sweep, load_catalogue, parse_catalogue

TOOL = {"model": "x", "input": "Save it", "max_output_tokens": 400, "temperature": 0}


def test_a_sweep_of_another_catalogue_s_scenario_takes_that_request_as_written():
    (default,) = [entry for entry in load_catalogue() if entry.name == "tool-finishes"]
    (swept,) = [entry for entry in load_catalogue("sweeps") if entry.name == "tool-call"]
    assert swept.responses == default.responses
    assert swept.sweep == Sweep()


def test_each_position_sets_every_request_s_own_limit_and_keeps_the_key_order():
    (messages,) = [entry for entry in load_catalogue("sweeps") if entry.name == "messages-tool-call"]
    at_17 = messages.at_limit(17)
    assert at_17.name == "messages-tool-call@17"
    assert [request.json["max_tokens"] for request in at_17.planned()] == [17, 17]
    assert list(at_17.planned()[0].json) == list(messages.planned()[0].json)
    (tool,) = [entry for entry in load_catalogue("sweeps") if entry.name == "tool-call"]
    planned = tool.at_limit(5).planned()
    assert [request.json.get("max_output_tokens", request.json.get("max_tokens")) for request in planned] == [5] * 4


def test_up_to_caps_the_positions_and_the_length_sets_them():
    assert list(Sweep().positions(37)) == list(range(1, 38))
    assert list(Sweep(up_to=10).positions(37)) == list(range(1, 11))
    assert list(Sweep(up_to=100).positions(37)) == list(range(1, 38))


@pytest.mark.parametrize(
    "entry, words",
    [
        ({"name": "a", "sweep": {"up_to": 0}, "responses": TOOL}, "at least 1"),
        ({"name": "a", "sweep": {"upto": 3}, "responses": TOOL}, '"up_to", "of", "catalogue"'),
        ({"name": "a", "sweep": {"of": "nothing"}}, "no such scenario"),
        ({"name": "a", "sweep": {"of": "tool-finishes", "catalogue": "nope"}}, "one of default"),
        ({"name": "a@3", "responses": TOOL}, "kept for a sweep's positions"),
        (
            {"name": "a", "sweep": True, "responses": TOOL, "turns": [{"tool_output": "done"}]},
            "a conversation cannot be swept",
        ),
        ({"name": "a", "sweep": True, "requests": [{"path": "/health"}]}, "these have none: GET /health"),
    ],
)
def test_a_sweep_that_cannot_be_recorded_is_refused_with_a_reason(entry, words):
    with pytest.raises(CatalogueError, match=None) as raised:
        parse_catalogue({"scenarios": [entry]})
    assert words in str(raised.value)
