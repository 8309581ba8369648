"""The 404 in the client's own words: each field named as the client sent it, and the nearest
recordings those with the client's own prompt and kind of request (research finding 4 of issue 45)."""

from __future__ import annotations

import json
import re

import pytest

from mockllama.matching.differences import differences
from mockllama.matching.matcher import Matcher
from mockllama.wire.errors import RequestError
from support.equivalences import BASE, CATALOGUE, CHAT, CHAT_BASE, MESSAGES, RESPONSES
from support.recordings import SCENARIOS

MATCHER = Matcher(dict(SCENARIOS))


def _missed(path: str, body: dict) -> str:
    with pytest.raises(RequestError) as missed:
        MATCHER.select("POST", path, json.dumps(body).encode())
    assert missed.value.status == 404
    return missed.value.message


def _nearest(message: str) -> list[str]:
    """The scenarios the 404 lists as nearest, in its order."""
    listed = message.split("Nearest scenario")[1].split(" Select a scenario")[0]
    return re.findall(r"(?:: |; )'([^']+)'(?: \(turn \d+\))?: ", listed)


def test_a_system_turn_nobody_recorded_is_named_instructions_and_the_seed_recording_is_nearest():
    message = _missed(RESPONSES, {**BASE, "instructions": "Answer tersely."})
    # as near: llama-index's seed request, whose null instructions are an empty system turn
    assert _nearest(message) == ["text-cut-8", "text-cut-8-null-instructions"]
    assert "'text-cut-8': instructions: sent \"Answer tersely.\", recorded absent" in message
    assert "messages" not in message  # the chat form llama-server converts it to, which the client never wrote
    assert not any(name.startswith("ladder") for name in _nearest(message))  # another prompt is farther


def test_a_limit_nobody_recorded_is_nearer_than_another_prompt():
    """litellm's responses() sends the seed prompt at its own limit: the seed's recordings are
    nearest, not a recording of another prompt at that limit."""
    message = _missed(RESPONSES, {**BASE, "max_output_tokens": 12, "stream": False})
    nearest = _nearest(message)
    assert "text-cut-8" in nearest and all(name.startswith("text-cut-") for name in nearest)
    assert "'text-cut-8': max_output_tokens: sent 12, recorded 8" in message


def _tool_request(prompt: str, **parameters) -> dict:
    tool = json.loads(json.dumps(CATALOGUE["tool-cut-20"].responses["tools"][0]))
    tool["parameters"].update(parameters)
    return {"model": "x", "input": prompt, "max_output_tokens": 25, "temperature": 0, "tools": [tool]}


def test_a_tool_request_s_nearest_recordings_are_tool_recordings():
    """Another prompt and another schema: tool recordings are still nearer than text ones."""
    message = _missed(RESPONSES, _tool_request("List the files in /tmp.", title="write_file_args"))
    nearest = _nearest(message)
    assert nearest and all(name.startswith(("tool", "poem")) for name in nearest), nearest
    assert 'tools[0].parameters.title: sent "write_file_args", recorded absent' in message


def test_each_difference_is_named_as_the_client_wrote_it():
    """A missing prefill is the input item the recording has and the request lacks; a string
    input is `input`; a schema is named down to the place inside it that differs."""
    recorded = CATALOGUE["tool-cut-20"].responses
    sent = _tool_request("Write the text 'Hello, world!' to the file /tmp/hello.txt.", title="write_file_args")
    found = [str(difference) for difference in differences(RESPONSES, sent, recorded)]
    assert 'input[1]: sent absent, recorded {"content": "<tool_call>\\n", "role": "assistant"}' in found
    assert 'tools[0].parameters.title: sent "write_file_args", recorded absent' in found
    assert 'tool_choice: sent absent, recorded "required"' in found
    assert "max_output_tokens: sent 25, recorded 20" in found
    other = differences(RESPONSES, {**BASE, "input": "Count to 10."}, CATALOGUE["text-cut-8"].responses)
    assert [str(difference) for difference in other] == [
        'input: sent "Count to 10.", recorded "Count from 1 to 200, separated by spaces."'
    ]


def test_a_chat_request_s_fields_are_named_as_on_chat():
    limit = {key: value for key, value in CHAT_BASE.items() if key != "max_tokens"}
    message = _missed(CHAT, {**limit, "max_completion_tokens": 9})
    assert "max_completion_tokens: sent 9, recorded 8" in message
    function = {key: value for key, value in _tool_request("x")["tools"][0].items() if key != "type"}
    sent, recorded = (
        {**CHAT_BASE, "tools": [{"type": "function", "function": {**function, "name": name}}]} for name in "fg"
    )
    found = [str(difference) for difference in differences(CHAT, sent, recorded)]
    assert found == ['tools[0].function.name: sent "f", recorded "g"']


def _reordered(value):
    """The same JSON with every object's keys in reverse order, at every depth."""
    if isinstance(value, dict):
        return {key: _reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(item) for item in value]
    return value


def test_a_miss_never_says_it_differs_in_nothing():
    """Every recorded request with every object's keys reversed: llama-server reads some of those
    orders (a tool's schema), so some miss, and each such 404 says what differs."""
    misses = 0
    for scenario in SCENARIOS.values():
        for interaction in scenario.interactions:
            if interaction.method != "POST" or not isinstance(interaction.request_json, dict):
                continue
            if scenario.setup != MATCHER.setup:  # answered by name only
                continue
            try:
                MATCHER.select("POST", interaction.path, json.dumps(_reordered(interaction.request_json)).encode())
            except RequestError as err:
                if err.status != 404:
                    continue
                misses += 1
                assert "(0 differences" not in err.message and "nothing (" not in err.message, err.message
    assert misses > 10


def test_an_object_that_differs_only_in_its_key_order_says_so():
    """A tool's input_schema reaches the prompt in the order sent (so no equivalence covers it): with
    its keys in another order (`type` first, as the Anthropic docs write it) it misses, and the 404
    names it rather than "0 differences"."""
    body = json.loads(json.dumps(CATALOGUE["messages-tool-forced-cut-20"].requests[0].json))
    schema = body["tools"][0]["input_schema"]
    body["tools"][0]["input_schema"] = {"type": schema["type"], **schema}
    message = _missed(MESSAGES, body)
    assert "'messages-tool-forced-cut-20': tools[0].input_schema: sent {" in message
    assert "(the same keys in another order" in message and "(0 differences" not in message


def test_the_anthropic_sdk_s_own_key_order_reaches_the_recording():
    """The Anthropic SDK writes a message as {"role", "content"}; the recording has {"content", "role"}."""
    body = {
        "max_tokens": 8,
        "messages": [{"role": "user", "content": BASE["input"]}],
        "model": "claude-x",
        "temperature": 0,
    }
    selection = MATCHER.select("POST", MESSAGES, json.dumps(body).encode())
    assert (selection.interaction.scenario, selection.how) == ("messages-cut-8", "match")
