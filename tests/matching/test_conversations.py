"""Conversations: a scenario with turns answers each request with the turn its own input asks for.

tool-conversation and tool-conversation-cut-20 were recorded by `mockllama record` from a live
llama-server: turn 1 calls write_file; turn 2 carries that function_call and its
function_call_output, and the model answers in text. Turn 1 carries an assistant prefill
("<tool_call>\n"), as tool-cut-* do: without it SmolLM2-135M writes Python instead of calling.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mockllama.recordings.catalogue import load_catalogue
from support.client_requests import CLIENT_REQUESTS
from support.httpkit import post_json
from support.recordings import SCENARIOS

BEHAVIOURS = ("buggy", "fixed", "spec")
CATALOGUE = {entry.name: entry for entry in load_catalogue()}
RESPONSES = "/v1/responses"


def _recorded(name: str, turn: int, stream: bool = False):
    return SCENARIOS[name].find("POST", RESPONSES, stream, turn)


def _final_text(name: str) -> str:
    body = _recorded(name, SCENARIOS[name].turns).body_json
    return "".join(part["text"] for item in body["output"] if item["type"] == "message" for part in item["content"])


def test_the_conversations_hold_two_turns_a_call_then_its_answer():
    for name in ("tool-conversation", "tool-conversation-cut-20"):
        assert SCENARIOS[name].turns == 2
        first = _recorded(name, 1).body_json
        assert [item["type"] for item in first["output"]] == ["function_call"]
        carried = _recorded(name, 2).request_json["input"]
        kinds = ["message", "message", "function_call", "function_call_output"]  # question, prefill, call, output
        assert [item.get("type", "message") for item in carried] == kinds
        assert carried[2]["call_id"] == first["output"][0]["call_id"] == carried[3]["call_id"]
    assert [item["type"] for item in _recorded("tool-conversation", 2).body_json["output"]] == ["message"]


def test_llama_server_refuses_a_next_turn_that_carries_the_cut_call():
    """What a client that trusted "completed" meets next: the cut arguments come back as a 500."""
    cut = _recorded("tool-conversation-cut-20", 1).body_json["output"][0]["arguments"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut)
    for stream in (False, True):
        second = _recorded("tool-conversation-cut-20", 2, stream)
        assert second.status == 500
        assert second.body_json["error"]["message"].startswith("Failed to parse tool call arguments as JSON")


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_an_openai_agents_loop_ends_within_the_recorded_turns(replies, behaviour, tmp_path):
    """A real agent loop with a real function tool: the tool runs once and the run ends in text."""
    import openai
    from agents import Agent, ModelSettings, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    calls = []

    @function_tool
    def write_file(path: str, content: str) -> str:
        """Write text content to a file at the given path.

        Args:
            path: Absolute path of the file
            content: Full text to write
        """
        calls.append((path, content))
        (tmp_path / Path(path).name).write_text(content)
        return f"wrote {len(content)} characters to {path}"

    async def run():
        client = openai.AsyncOpenAI(base_url=replies.base_url(behaviour), api_key="unused")
        agent = Agent(
            name="writer",
            model=OpenAIResponsesModel(model="gpt-4o-mini", openai_client=client),
            tools=[write_file],
            model_settings=ModelSettings(max_tokens=400, temperature=0, tool_choice="required"),
        )
        question = _recorded("tool-conversation", 1).request_json["input"]  # the question and the prefill
        return await Runner.run(agent, question, max_turns=5)

    result = asyncio.run(run())
    assert calls == [("/tmp/hello.txt", "Hello, world!")]  # exactly once, with the recorded arguments
    assert (tmp_path / "hello.txt").read_text() == "Hello, world!"
    assert result.final_output == _final_text("tool-conversation")
    assert [(r["scenario"], r["turn"], r["status"]) for r in replies.replies] == [
        ("tool-conversation", "1", 200),
        ("tool-conversation", "2", 200),
    ]


def _turn_2(name: str, output: str, **changes) -> dict:
    first = _recorded(name, 1)
    call = first.body_json["output"][0]
    body = {key: value for key, value in first.request_json.items() if key not in ("tool_choice", "stream")}
    body["input"] = [
        *body["input"],
        call,
        {"call_id": call["call_id"], "output": output, "type": "function_call_output"},
    ]
    return {**body, **changes}


def test_a_later_turn_with_another_tool_output_gets_that_turn(server):
    """Matched on its first turn: the tool's own output text does not have to be the recorded one."""
    status, headers, body = post_json(server.url, RESPONSES, _turn_2("tool-conversation", "done"))
    assert status == 200
    assert (headers["X-Mockllama-Scenario"], headers["X-Mockllama-Turn"]) == ("tool-conversation", "2")
    assert headers["X-Mockllama-Selected-By"] == "conversation"
    assert json.loads(body)["output"][0]["type"] == "message"


def test_a_streamed_turn_carrying_the_streamed_call_id_gets_the_streamed_turn(server):
    streamed_call = next(
        e.json()["item"]
        for e in _recorded("tool-conversation", 1, stream=True).events
        if (e.json() or {}).get("type") == "response.output_item.done"
    )
    request = _turn_2("tool-conversation", "wrote 13 characters to /tmp/hello.txt", stream=True)
    request["input"][2:] = [
        streamed_call,
        {
            "call_id": streamed_call["call_id"],
            "type": "function_call_output",
            "output": "wrote 13 characters to /tmp/hello.txt",
        },
    ]
    status, headers, body = post_json(server.url, RESPONSES, request)
    assert status == 200 and headers["X-Mockllama-Turn"] == "2"
    assert b"event: response.completed" in body and b"output_text" in body


@pytest.mark.parametrize("select", ["header", "model"])
def test_a_conversation_selected_by_name_follows_the_input(server, select):
    def ask(items):
        body = {"model": "x", "input": items, "max_output_tokens": 50}
        headers = {}
        if select == "header":
            headers["X-Mockllama-Scenario"] = "tool-conversation"
        else:
            body["model"] = "tool-conversation"
        return post_json(server.url, RESPONSES, body, headers)

    question = [{"role": "user", "content": "Do something with a tool."}]
    status, headers, body = ask(question)
    assert (status, headers["X-Mockllama-Turn"]) == (200, "1")
    call = json.loads(body)["output"][0]
    assert call["type"] == "function_call"
    answer = {"type": "function_call_output", "call_id": call["call_id"], "output": "anything"}
    status, headers, body = ask([*question, call, answer])
    assert (status, headers["X-Mockllama-Turn"]) == (200, "2")
    assert json.loads(body)["output"][0]["type"] == "message"
    status, headers, body = ask([*question, call, answer, call, answer])
    assert status == 404
    message = json.loads(body)["error"]["message"]
    assert "scenario 'tool-conversation'" in message and "records 2 turns" in message and "turn 3" in message
    assert headers["X-Mockllama-Scenario"] == "none"


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_a_single_turn_tool_scenario_never_replays_its_call_for_a_later_turn(server, behaviour):
    """The agent-loop trap: tool-cut-20 selected by name used to answer every turn with the same call."""
    status, _, body = post_json(server.url, f"/{behaviour}{RESPONSES}", {"model": "tool-cut-20", "input": "Write it."})
    call = json.loads(body)["output"][0]
    later = [
        {"role": "user", "content": "Write it."},
        call,
        {"type": "function_call_output", "call_id": call["call_id"], "output": "error: bad JSON"},
    ]
    status, _, body = post_json(server.url, f"/{behaviour}{RESPONSES}", {"model": "tool-cut-20", "input": later})
    assert status == 404
    error = json.loads(body)["error"]
    assert error["type"] == "not_found_error"
    assert "scenario 'tool-cut-20'" in error["message"] and "records 1 turn," in error["message"]
    assert "asks for turn 2" in error["message"]


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_the_cut_conversation_marks_turn_1_and_replays_the_servers_refusal_of_turn_2(server, behaviour):
    name = "tool-conversation-cut-20"
    turn_1 = dict(_recorded(name, 1).request_json)
    status, headers, body = post_json(server.url, f"/{behaviour}{RESPONSES}", turn_1)
    assert status == 200 and headers["X-Mockllama-Scenario"] == name
    assert json.loads(body)["status"] == ("completed" if behaviour == "buggy" else "incomplete")
    status, headers, body = post_json(
        server.url, f"/{behaviour}{RESPONSES}", _turn_2(name, "error: the arguments are not valid JSON")
    )
    assert (status, headers["X-Mockllama-Scenario"], headers["X-Mockllama-Turn"]) == (500, name, "2")
    error = json.loads(body)["error"]
    assert (error["type"], error["code"]) == ("server_error", 500)
    assert "Failed to parse tool call arguments as JSON" in error["message"]


# --- a scenario chosen by name: only its own replies in the history count as turns --------------

ALICE = [
    {"type": "message", "role": "user", "content": "My name is Alice."},
    {"type": "message", "role": "assistant", "content": "Hello Alice! Nice to meet you."},
    {"type": "message", "role": "user", "content": "What is my name?"},
]
SOMEONE_ELSES_CALL = [
    {"type": "message", "role": "user", "content": "Look it up."},
    {"type": "function_call", "call_id": "call_not_recorded", "name": "lookup", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_not_recorded", "output": "Alice"},
    {"type": "message", "role": "user", "content": "What is my name?"},
]


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
@pytest.mark.parametrize("history", [ALICE, SOMEONE_ELSES_CALL], ids=["hand-written", "someone-elses-call"])
@pytest.mark.parametrize("select", ["model", "header"])
def test_a_history_that_is_not_the_scenarios_own_is_the_prompt(server, behaviour, history, select):
    """Test suites send a conversation of their own to a scenario chosen by name: it gets turn 1."""
    body = {"model": "text-finishes" if select == "model" else "x", "input": history}
    headers = {"X-Mockllama-Scenario": "text-finishes"} if select == "header" else {}
    status, headers, reply = post_json(server.url, f"/{behaviour}{RESPONSES}", body, headers)
    assert status == 200, reply
    assert (headers["X-Mockllama-Scenario"], headers["X-Mockllama-Turn"]) == ("text-finishes", "1")
    assert json.loads(reply)["status"] == "completed"


def _own_call(name: str) -> dict:
    return _recorded(name, 1).body_json["output"][0]


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_the_scenarios_own_call_counts_by_its_name_and_arguments_under_another_id(server, behaviour):
    """A client that gives the call an id of its own still sends the recorded call back: turn 2."""
    call = {**_own_call("tool-cut-20"), "call_id": "call_renamed_by_the_client", "id": "fc_other"}
    later = [
        {"role": "user", "content": "Write it."},
        call,
        {"type": "function_call_output", "call_id": "call_renamed_by_the_client", "output": "done"},
    ]
    status, _, body = post_json(server.url, f"/{behaviour}{RESPONSES}", {"model": "tool-cut-20", "input": later})
    assert status == 404 and "asks for turn 2" in json.loads(body)["error"]["message"]


def test_the_scenarios_own_text_counts_as_its_reply(server):
    """text-finishes's own recorded answer, sent back as the assistant's message, asks for turn 2."""
    body = _recorded("text-finishes", 1).body_json
    text = "".join(part["text"] for item in body["output"] if item["type"] == "message" for part in item["content"])
    history = [
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": text},
        {"role": "user", "content": "And of Spain?"},
    ]
    status, _, reply = post_json(server.url, RESPONSES, {"model": "text-finishes", "input": history})
    assert status == 404 and "records 1 turn, but this request carries 1 model reply" in reply.decode()
    # one letter off is another text: the prompt, turn 1
    history[1] = {"role": "assistant", "content": text + "!"}
    status, headers, _ = post_json(server.url, RESPONSES, {"model": "text-finishes", "input": history})
    assert (status, headers["X-Mockllama-Turn"]) == (200, "1")


def test_an_own_tool_output_alone_counts(server):
    """The function_call_output with a recorded call_id is the loop coming back, whatever the call says."""
    call = _own_call("tool-cut-20")
    later = [
        {"role": "user", "content": "Write it."},
        {**call, "arguments": "{}", "name": "other"},
        {"type": "function_call_output", "call_id": call["call_id"], "output": "error: bad JSON"},
    ]
    status, _, _ = post_json(server.url, RESPONSES, {"model": "tool-cut-20", "input": later})
    assert status == 404


def test_matched_by_its_first_turn_every_model_reply_counts():
    """A conversation reached by matching follows its history as sent: a client that re-serialises
    the call (the AI SDK sends compact JSON) under an id of its own still asks for turn 2."""
    request = _turn_2("tool-conversation", "done")
    call = request["input"][-2]
    compact = json.dumps(json.loads(call["arguments"]), separators=(",", ":"))
    request["input"][-2:] = [
        {**call, "call_id": "call_mine", "arguments": compact},
        {"type": "function_call_output", "call_id": "call_mine", "output": "done"},
    ]
    from mockllama.matching.matcher import Matcher

    selection = Matcher(dict(SCENARIOS)).select("POST", RESPONSES, json.dumps(request).encode())
    assert (selection.how, selection.turn) == ("conversation", 2)


@pytest.mark.parametrize(
    "name", ["openai-agents-responses-Runner.run-tool-turn2", "openai-agents-chat-Runner.run-tool-turn2"]
)
def test_a_later_turn_whose_first_turn_was_never_recorded_matches_no_conversation(name):
    """openai-agents' second turn, as captured: its first turn had no prefill and its call is whole.
    It shares every field of tool-conversation-cut-20's recorded second turn but its history: that
    conversation's first turn carried the prefill, and its reply was cut. So it is no later turn of
    that conversation (whose turn 2 is llama-server's 500 for the cut call), and gets a 404."""
    from mockllama.matching.matcher import Matcher
    from mockllama.wire.errors import RequestError

    request = CLIENT_REQUESTS[name]
    with pytest.raises(RequestError) as missed:
        Matcher(dict(SCENARIOS)).select("POST", request.path, request.body.encode())
    assert missed.value.status == 404


def test_a_later_turn_carrying_another_reply_than_the_recorded_one_matches_no_conversation():
    """The recorded first turn, but a call with other arguments than the model's: not this conversation."""
    from mockllama.matching.matcher import Matcher
    from mockllama.wire.errors import RequestError

    request = _turn_2("tool-conversation", "done")
    request["input"][-2] = {**request["input"][-2], "arguments": '{"path": "/tmp/other.txt", "content": "Hi"}'}
    with pytest.raises(RequestError) as missed:
        Matcher(dict(SCENARIOS)).select("POST", RESPONSES, json.dumps(request).encode())
    assert missed.value.status == 404
