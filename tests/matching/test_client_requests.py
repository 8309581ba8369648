"""Real clients' default requests reach a recording made from that very request, unselected.

Each body in tests/support/client_bodies is what a client library sent by default (its README
names the client and version): sent as it came, with no scenario header and its own model name,
it must be matched (not chosen) to the recording of its shape.
"""

from __future__ import annotations

import pytest

from mockllama.matching.matcher import Matcher
from support.client_requests import CLIENT_REQUESTS
from support.recordings import SCENARIOS

FIRST_TURNS = sorted(name for name, request in CLIENT_REQUESTS.items() if request.turn == 1)
# A client's own tool request (its schema, its settings), by the client and API that send it.
TOOL_SHAPES = {
    "openai-agents-": "tool-agents-cut-20",
    "pydantic-ai-": "tool-pydantic-ai-cut-20",
    "haystack-responses-": "tool-haystack-cut-20",
    "haystack-chat-": "tool-haystack-chat-cut-20",
    "llama-index-responses-": "tool-llama-index-cut-20",
    "llama-index-chat-": "tool-llama-index-chat-cut-20",
}


def intended(name: str) -> str:
    """The recording made from the request shape ``name`` has."""
    if name.startswith("anthropic-"):
        tool, sampled = "-tool-" in name, name.endswith("-default")
        return ("messages-tool-cut-20" if tool else "messages-cut-8") + ("-no-temperature" if sampled else "")
    if name == "openai-responses.create-tool-catalogue":  # the prefill and tool_choice, as the catalogue sends them
        return "tool-cut-20"
    if name.endswith("-tool"):
        return next(
            (scenario for prefix, scenario in TOOL_SHAPES.items() if name.startswith(prefix)), "tool-plain-cut-20"
        )
    if name.startswith("litellm-responses-"):  # it raises any limit under 16 to 16
        return "text-cut-64" if name.endswith("-64") else "text-cut-16"
    if name.startswith("llama-index-responses-"):  # "instructions": null
        return "text-cut-8-null-instructions"
    return "text-cut-8"


MATCHER = Matcher(dict(SCENARIOS))


@pytest.mark.parametrize("name", FIRST_TURNS)
def test_a_client_s_default_request_reaches_the_recording_of_its_shape(name):
    request = CLIENT_REQUESTS[name]
    selection = MATCHER.select("POST", request.path, request.body.encode())
    assert (selection.interaction.scenario, selection.how) == (intended(name), "match")
    assert selection.interaction.stream == (request.json.get("stream") is True)


def test_every_client_and_every_new_recording_is_covered():
    clients = {name.split("-")[0] for name in FIRST_TURNS}
    assert clients == {"openai", "langchain", "litellm", "pydantic", "llama", "haystack", "anthropic"}
    reached = {intended(name) for name in FIRST_TURNS}
    assert set(TOOL_SHAPES.values()) | {"tool-plain-cut-20", "text-cut-16", "text-cut-8-null-instructions"} <= reached
    assert len(FIRST_TURNS) == 83
