"""Real clients' default requests reach a recording made from that very request, unselected.

Each body in tests/support/client_bodies is what a client library sent by default (its README
names the client and version): sent as it came, with no scenario header and its own model name,
it must be matched (not chosen) to the recording of its shape.
"""

from __future__ import annotations

import json

import anthropic
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


# The Anthropic docs write a tool as name, description, input_schema; the recording has its keys sorted.
DOCS_ORDER = ("name", "description", "input_schema")


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_the_anthropic_tool_request_in_the_docs_key_order_reaches_its_recording(stream):
    """llama-server's Anthropic conversion rebuilds each tool, so a tool's own key order is not asked about."""
    recorded = SCENARIOS["messages-tool-cut-20"].find("POST", "/v1/messages", stream)
    body = json.loads(json.dumps(recorded.request_json))
    (tool,) = body["tools"]
    assert list(tool) != list(DOCS_ORDER)  # recorded in another order
    body["tools"] = [{key: tool[key] for key in DOCS_ORDER}]
    body["model"] = "claude-sonnet-4-5"  # a user's own model name, no scenario's
    selection = MATCHER.select("POST", "/v1/messages", json.dumps(body).encode())
    assert (selection.interaction.scenario, selection.how, selection.interaction.stream) == (
        "messages-tool-cut-20",
        "match",
        stream,
    )


def test_the_anthropic_sdk_s_tool_request_as_its_docs_write_it_reaches_its_recording(server):
    """The request a new user writes from the Anthropic docs, sent by the SDK itself, unselected."""
    client = anthropic.Anthropic(base_url=server.url, api_key="unused", max_retries=0)
    # the input_schema as recorded: llama-server renders it in the order sent, so its order is asked about
    schema = SCENARIOS["messages-tool-cut-20"].interactions[0].request_json["tools"][0]["input_schema"]
    raw = client.messages.with_raw_response.create(
        model="claude-sonnet-4-5",
        max_tokens=20,
        messages=[{"role": "user", "content": "Write the text 'Hello, world!' to the file /tmp/hello.txt."}],
        tools=[
            {
                "name": "write_file",
                "description": "Write text content to a file at the given path.",
                "input_schema": schema,
            }
        ],
        extra_body={"temperature": 0},
    )
    assert raw.headers["X-Mockllama-Scenario"] == "messages-tool-cut-20"
    assert raw.parse().stop_reason == "max_tokens"
