"""fixed corrects /v1/responses on the real recordings, decided by the chat twin's finish_reason."""

from __future__ import annotations

import json

import openai
import pytest

from support import yamlkit
from support.httpkit import call, request_bytes, sse_pairs
from support.recordings import SCENARIOS, all_interactions, chosen

RESPONSE_SCENARIOS = sorted(name for name, s in SCENARIOS.items() if s.find("POST", "/v1/responses", True))
# Written from the recordings, not computed by the code under test: each Responses scenario's chat
# twin said `length` (cut) or not (finished). A new Responses recording must be added here by hand,
# from its twin's finish_reason; test_the_table_agrees_with_the_chat_twins_in_the_yaml checks it.
CUT_TABLE = {
    "text-cut-8": True,
    "text-cut-64": True,
    "text-finishes": False,
    "text-exact-limit": False,
    "tool-cut-8": True,
    "tool-cut-20": True,
    "tool-cut-30": True,
    "tool-finishes": False,
    "tool-conversation": False,  # turn 1 (turn 2 answers in text; the cut one's turn 2 is an HTTP 500)
    "tool-conversation-cut-20": True,
    "poem-cut-20": True,
    "poem-cut-30": True,
    "poem-finishes": False,
    "ladder-cut-8": True,
    "ladder-cut-16": True,
    "ladder-finishes": False,
    "thinking-cut-12": True,
    "thinking-cut-32": True,
    "thinking-finishes": False,
    # catalogue multi-item: two function_call items; the cut falls inside the second
    "tool-two-calls-finishes": False,
    "tool-two-calls-cut-70": True,
    # catalogue clients: real clients' default requests; no tool request gets a call (a cut text reply)
    "text-cut-16": True,
    "text-cut-8-null-instructions": True,
    "text-finishes-null-instructions": False,
    "tool-plain-cut-20": True,
    "tool-plain-required-cut-20": True,
    "tool-agents-cut-20": True,
    "tool-pydantic-ai-cut-20": True,
    "tool-haystack-cut-20": True,
    "tool-haystack-chat-cut-20": True,
    "tool-llama-index-cut-20": True,
    "tool-llama-index-chat-cut-20": True,
}
CUT = sorted(name for name, cut in CUT_TABLE.items() if cut)


def _request(name: str, stream: bool) -> dict:
    return dict(SCENARIOS[name].find("POST", "/v1/responses", stream).request_json)


@pytest.fixture
def fixed_client(server):
    return openai.OpenAI(base_url=server.base_url("fixed"), api_key="unused")


def _fixed_stream(server, name):
    interaction = SCENARIOS[name].find("POST", "/v1/responses", True)
    status, headers, body = call(
        server.url, "POST", "/fixed/v1/responses", request_bytes(interaction), chosen(interaction)
    )
    assert status == 200
    return sse_pairs(body)


def _fixed_body(server, name) -> dict:
    interaction = SCENARIOS[name].find("POST", "/v1/responses", False)
    status, headers, body = call(
        server.url, "POST", "/fixed/v1/responses", request_bytes(interaction), chosen(interaction)
    )
    assert status == 200
    return json.loads(body)


def test_the_recordings_hold_the_cut_scenarios_the_issue_names():
    assert {"text-cut-8", "text-cut-64", "tool-cut-8", "tool-cut-20", "tool-cut-30", "poem-cut-20"} <= set(CUT)
    assert "text-exact-limit" not in CUT and "tool-finishes" not in CUT


def test_the_table_covers_every_bundled_responses_scenario():
    assert sorted(CUT_TABLE) == RESPONSE_SCENARIOS, "add each new Responses recording to CUT_TABLE"


@pytest.mark.parametrize("name", sorted(CUT_TABLE))
@pytest.mark.parametrize("stream", [False, True])
def test_the_table_agrees_with_the_chat_twins_in_the_yaml(name, stream):
    reason = yamlkit.chat_finish_reason(name, stream)
    assert (reason == "length") == CUT_TABLE[name], reason


@pytest.mark.parametrize("name", ["text-cut-8", "tool-cut-20"])
def test_cut_replies_are_incomplete_with_the_sdk(fixed_client, name):
    response = fixed_client.responses.create(**_request(name, False))
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output[-1].status == "incomplete"


def test_cut_tool_call_with_valid_json_is_still_incomplete(fixed_client):
    response = fixed_client.responses.create(**_request("tool-cut-30", False))
    call_item = response.output[-1]
    assert call_item.type == "function_call"
    assert json.loads(call_item.arguments) == {"path": "/tmp/hello.txt", "content": "Hello, world!"}
    assert response.status == "incomplete"
    assert call_item.status == "incomplete"


def test_exact_limit_that_stopped_is_completed(fixed_client):
    request = _request("text-exact-limit", False)
    response = fixed_client.responses.create(**request)
    assert response.usage.output_tokens == request["max_output_tokens"]
    assert response.status == "completed"
    assert response.incomplete_details is None


def test_finished_tool_call_is_completed_and_its_stream_has_arguments_done(fixed_client):
    response = fixed_client.responses.create(**_request("tool-finishes", False))
    assert response.status == "completed"
    assert response.output[-1].status == "completed"
    events = list(fixed_client.responses.create(**_request("tool-finishes", True)))
    kinds = [event.type for event in events]
    assert "response.function_call_arguments.done" in kinds
    assert kinds[-1] == "response.completed"


@pytest.mark.parametrize("name", CUT)
def test_every_cut_stream_ends_incomplete_and_never_completed(server, name):
    pairs = _fixed_stream(server, name)
    names = [event for event, _ in pairs]
    assert names[-1] == "response.incomplete"
    assert pairs[-1][1]["response"]["status"] == "incomplete"
    assert "response.completed" not in names


@pytest.mark.parametrize("name", RESPONSE_SCENARIOS)
def test_terminal_event_agrees_with_the_non_streaming_body(server, name):
    terminal = _fixed_stream(server, name)[-1][1]["response"]
    body = _fixed_body(server, name)
    assert terminal["status"] == body["status"]
    assert terminal["incomplete_details"] == body["incomplete_details"]
    assert [item["status"] for item in terminal["output"]] == [item["status"] for item in body["output"]]
    assert body["status"] == ("incomplete" if name in CUT else "completed")


@pytest.mark.parametrize("name", RESPONSE_SCENARIOS)
def test_event_line_equals_type_and_every_call_gets_arguments_done_first(server, name):
    pairs = _fixed_stream(server, name)
    for event, data in pairs:
        assert event == data["type"]
    for index, (event, data) in enumerate(pairs):
        if event == "response.output_item.done" and data["item"]["type"] == "function_call":
            done_event, done = pairs[index - 1]
            assert done_event == "response.function_call_arguments.done"
            assert done["item_id"] == data["item"]["id"]
            assert done["name"] == data["item"]["name"]
            deltas = "".join(
                d["delta"]
                for e, d in pairs
                if e == "response.function_call_arguments.delta" and d["item_id"] == done["item_id"]
            )
            assert done["arguments"] == deltas == data["item"]["arguments"]


@pytest.mark.parametrize("name", CUT)
def test_cut_non_streaming_body_has_null_completed_at_and_keeps_content(server, name):
    body = _fixed_body(server, name)
    recorded = SCENARIOS[name].find("POST", "/v1/responses", False).body_json
    assert body["completed_at"] is None
    assert body["usage"] == recorded["usage"] and body["id"] == recorded["id"]
    for fixed_item, recorded_item in zip(body["output"], recorded["output"], strict=True):
        assert {k: v for k, v in fixed_item.items() if k != "status"} == {
            k: v for k, v in recorded_item.items() if k != "status"
        }


def _item_statuses(events) -> list[str]:
    return [data["item"]["status"] for event, data in events if event == "response.output_item.done"]


@pytest.mark.parametrize("name", RESPONSE_SCENARIOS)
def test_the_cut_item_alone_is_incomplete_in_stream_and_body(server, name):
    """The item being generated at the cut is the last; it alone says incomplete, in both forms."""
    streamed = _item_statuses(_fixed_stream(server, name))
    in_body = [item["status"] for item in _fixed_body(server, name)["output"]]
    for statuses in (streamed, in_body):
        assert statuses, name
        assert statuses[:-1] == ["completed"] * (len(statuses) - 1)
        assert statuses[-1] == ("incomplete" if CUT_TABLE[name] else "completed")


@pytest.mark.parametrize("name", CUT)
def test_the_cut_items_done_event_keeps_everything_but_its_status(server, name):
    """Only the status changes: id, type, name, arguments and content stay as recorded."""
    fixed_items = [d["item"] for e, d in _fixed_stream(server, name) if e == "response.output_item.done"]
    recorded = [
        e["item"]
        for e in yamlkit.find(name, "/v1/responses", True).events()
        if e.get("type") == "response.output_item.done"
    ]
    # llama-server's bug; its streamed reasoning items carry no status at all
    assert [item.get("status", "completed") for item in recorded] == ["completed"] * len(recorded)
    for fixed_item, recorded_item in zip(fixed_items, recorded, strict=True):
        assert {k: v for k, v in fixed_item.items() if k != "status"} == {
            k: v for k, v in recorded_item.items() if k != "status"
        }


def test_fixed_says_which_rule_decided(server):
    interaction = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False)
    _, headers, _ = call(server.url, "POST", "/fixed/v1/responses", request_bytes(interaction), chosen(interaction))
    assert headers["X-Mockllama-Decided-By"] == "chat-twin finish_reason=length"


@pytest.mark.parametrize(
    ("scenario", "interaction"), all_interactions(lambda i: i.path != "/v1/responses" or i.status != 200)
)
def test_fixed_replays_chat_messages_and_errors_as_recorded(server, scenario, interaction):
    status, headers, body = call(
        server.url, interaction.method, f"/fixed{interaction.path}", request_bytes(interaction), chosen(interaction)
    )
    assert (status, body) == (interaction.status, interaction.body)
    assert headers["X-Mockllama-Behaviour"] == "fixed"


@pytest.mark.parametrize("name", ["tool-cut-20", "poem-finishes"])
def test_a_stream_that_already_sends_arguments_done_gets_no_second_one(name):
    """A corrected server (llama-server with patches/...) sends its own; fixed applied to fixed adds none."""
    from mockllama.behaviours.fixed import fix_stream

    recorded = SCENARIOS[name].find("POST", "/v1/responses", True)
    once = fix_stream(tuple(recorded.events), cut=name in CUT)
    twice = fix_stream(once, cut=name in CUT)
    assert [event.raw for event in twice] == [event.raw for event in once]
    kinds = [event.name for event in twice]
    assert kinds.count("response.function_call_arguments.done") == kinds.count("response.output_item.done") == 1
