"""Conversations: a scenario answers each request with the turn its own input asks for.

The turn is 1 + the model replies the request already carries; past the last recorded turn the
reply is an error that names the scenario and the turn, never a replay of an earlier turn.
"""

from __future__ import annotations

import json

import pytest
from httpkit import post_json

BEHAVIOURS = ("buggy", "fixed", "spec")
RESPONSES = "/v1/responses"


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_a_single_turn_tool_scenario_never_replays_its_call_for_a_later_turn(server, behaviour):
    """The agent-loop trap: tool-cut-20 selected by name used to answer every turn with the same call."""
    status, _, body = post_json(server.url, f"/{behaviour}{RESPONSES}", {"model": "tool-cut-20", "input": "Write it."})
    call = json.loads(body)["output"][0]
    later = [{"role": "user", "content": "Write it."}, call,
             {"type": "function_call_output", "call_id": call["call_id"], "output": "error: bad JSON"}]
    status, _, body = post_json(server.url, f"/{behaviour}{RESPONSES}", {"model": "tool-cut-20", "input": later})
    assert status == 404
    error = json.loads(body)["error"]
    assert error["type"] == "not_found_error"
    assert "scenario 'tool-cut-20'" in error["message"] and "records 1 turn," in error["message"]
    assert "asks for turn 2" in error["message"]
