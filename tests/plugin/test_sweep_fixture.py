"""One test across every cut point: the `mockllama_cut` fixture runs it once per position of the
tool-call sweep and per behaviour, every server's variant included, on the session's one server."""

from __future__ import annotations

import httpx
import pytest

from mockllama.behaviours.registry import FIRST
from mockllama.behaviours.variants import SERVERS
from mockllama.behaviours.variants.signals import ABSENT

# One connection pool for the whole module: several hundred tests, one request each.
CLIENT = httpx.Client(timeout=30)
RECORDED: dict[str, tuple] = {}  # each position's arguments and usage, as buggy (the recording) says
DECLARED = {variant.name: variant for variant in SERVERS}


def declared_status(behaviour: str, cut: bool) -> str:
    """What each behaviour writes as the response's status: buggy never reads the stop reason,
    fixed and spec write the honest one, a variant what its server's declaration says (ABSENT: no
    status at all)."""
    if behaviour == "buggy":
        return "completed"
    if behaviour in FIRST:
        return "incomplete" if cut else "completed"
    return DECLARED[behaviour].body.when(cut).status


def reply(base_url: str, scenario: str) -> dict:
    answer = CLIENT.post(f"{base_url}/responses", json={"model": scenario, "input": "anything"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["X-Mockllama-Scenario"] == scenario
    return answer.json()


def said(body: dict) -> tuple:
    """What a client reads of the cut itself: the text or arguments so far, and the usage."""
    last = body["output"][-1]
    if last["type"] == "function_call":
        text = last["arguments"]
    else:
        text = "".join(part.get("text", "") for part in last.get("content") or [])
    return last["type"], text, body["usage"]["output_tokens"]


@pytest.mark.mockllama_sweep("tool-call", behaviours="all")
def test_every_behaviour_at_every_position_writes_its_status_and_keeps_the_cut_as_recorded(mockllama_cut, mockllama):
    body = reply(mockllama_cut.base_url, mockllama_cut.scenario)
    assert body.get("status", ABSENT) == declared_status(mockllama_cut.behaviour, mockllama_cut.cut)
    assert said(body)[2] == mockllama_cut.position
    assert mockllama_cut.cut == (mockllama_cut.position < mockllama_cut.last)
    if mockllama_cut.scenario not in RECORDED:
        RECORDED[mockllama_cut.scenario] = said(reply(mockllama.base_url("buggy"), mockllama_cut.scenario))
    assert said(body) == RECORDED[mockllama_cut.scenario]  # no behaviour touches what was generated
