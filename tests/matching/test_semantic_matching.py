"""Semantic matching: requests llama-server treats as one match one recording; others miss.

The pairs come from tests/support/equivalences.py, which the live tier proves against llama-server.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from mockllama.matching.matcher import Matcher
from mockllama.matching.pipeline import canonical_key
from mockllama.recordings.cassettes import load_scenarios
from mockllama.recordings.chat_twin import chat_twin, turn_of
from mockllama.wire.errors import RequestError
from support.equivalences import (
    BASE,
    CATALOGUE,
    CHAT,
    CHAT_BASE,
    DIFFERENT,
    EQUIVALENT,
    RESPONSES,
    reordered_properties,
)
from support.httpkit import post_json


@pytest.mark.parametrize(("name", "path", "first", "second"), EQUIVALENT, ids=[case[0] for case in EQUIVALENT])
def test_equivalent_forms_get_one_key(name, path, first, second):
    assert canonical_key(path, first) == canonical_key(path, second)


@pytest.mark.parametrize(("name", "path", "first", "second"), DIFFERENT, ids=[case[0] for case in DIFFERENT])
def test_forms_llama_server_tells_apart_get_two_keys(name, path, first, second):
    assert canonical_key(path, first) != canonical_key(path, second)


# a recording answers these
RECORDED = [case for case in EQUIVALENT if "function_call" not in case[0] and not case[0].startswith("unrecorded")]


@pytest.mark.parametrize(("name", "path", "first", "second"), RECORDED, ids=[case[0] for case in RECORDED])
def test_every_equivalent_form_reaches_the_same_recording(server, name, path, first, second):
    scenarios = set()
    for body in (first, second):
        status, headers, _ = post_json(server.url, path, body)
        assert status == 200, (name, body)
        assert headers["X-Mockllama-Selected-By"] == "match"
        scenarios.add(headers["X-Mockllama-Scenario"])
    assert len(scenarios) == 1


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"temperature": 0.7}, "temperature: sent 0.7, recorded 0"),
        ({"max_output_tokens": 500}, "max_output_tokens: sent 500, recorded 8"),
        ({"top_p": 0.5, "temperature": 0.7}, "top_p: sent 0.5, recorded absent"),  # counts unless greedy
        (
            {"tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]},
            'tools: sent [{"name": "f", "parameters": {"type": "object"}, "type": ..., recorded absent',
        ),
        ({"instructions": "Be brief."}, 'instructions: sent "Be brief.", recorded absent'),  # in the client's words
        ({"frequency_penalty": 1.5}, "frequency_penalty: sent 1.5, recorded absent"),  # even at temperature 0
        (
            {
                "input": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": "Count from 1 to 200,"},
                            {"type": "input_text", "text": " separated by spaces."},
                        ],
                    }
                ]
            },
            'input[0].content: sent [{"type": "input_text", "text": "Count from 1 to 200,"}',
        ),
    ],
    ids=["temperature", "limit", "top_p", "tools", "instructions", "penalty", "two-text-parts"],
)
def test_a_difference_that_changes_generation_still_misses(server, change, words):
    status, _, body = post_json(server.url, RESPONSES, {**BASE, **change})
    assert status == 404
    assert words in json.loads(body)["error"]["message"]


def _recorded_as_text(server, tmp_path, name: str):
    """Record a scenario through mockllama record, which stores each body as the text sent."""
    import subprocess
    import sys

    subprocess.run(
        [
            sys.executable,
            "-m",
            "mockllama",
            "record",
            "--server",
            server.url,
            "--out",
            str(tmp_path),
            "--scenario",
            name,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return load_scenarios([tmp_path])


def test_another_tool_property_order_misses_and_says_why(server, tmp_path):
    scenarios = _recorded_as_text(server, tmp_path, "tool-cut-20")
    assert scenarios["tool-cut-20"].interactions[0].request_raw is not None
    matcher = Matcher(scenarios)
    request = reordered_properties(CATALOGUE["tool-cut-20"].responses)
    with pytest.raises(RequestError) as missed:
        matcher.select("POST", RESPONSES, json.dumps(request).encode())
    assert missed.value.status == 404
    assert "tools[0].parameters.properties: " in missed.value.message
    assert "the same keys in another order" in missed.value.message
    sent_as_recorded = json.dumps(CATALOGUE["tool-cut-20"].responses).encode()
    assert matcher.select("POST", RESPONSES, sent_as_recorded).interaction.scenario == "tool-cut-20"


def test_a_recording_stored_as_a_mapping_matches_in_any_key_order(server, tmp_path):
    """A body recorded with aiohttp's json= is stored by vcrpy as a YAML mapping with its keys
    sorted: it cannot tell the order it was sent in, so no order can be held against a request."""
    import aiohttp

    from mockllama.recordings.record import _vcr

    async def record_with_json():
        with _vcr().use_cassette(str(tmp_path / "old.yaml")):
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
                async with session.post(server.url + RESPONSES, json=CATALOGUE["tool-cut-20"].responses) as reply:
                    assert reply.status == 200
                    await reply.read()

    asyncio.run(record_with_json())
    scenarios = load_scenarios([tmp_path])
    assert scenarios["old"].interactions[0].request_raw is None  # a mapping, order lost
    matcher = Matcher(scenarios)
    for request in (CATALOGUE["tool-cut-20"].responses, reordered_properties(CATALOGUE["tool-cut-20"].responses)):
        assert matcher.select("POST", RESPONSES, json.dumps(request).encode()).interaction.scenario == "old"


def test_chat_max_completion_tokens_is_max_tokens(server):
    sent = {**{k: v for k, v in CHAT_BASE.items() if k != "max_tokens"}, "max_completion_tokens": 8}
    status, headers, _ = post_json(server.url, CHAT, sent)
    assert status == 200 and headers["X-Mockllama-Scenario"] == "text-cut-8"


def test_canonical_form_is_the_chat_twin():
    """One conversion: the canonical form of a Responses request is its chat twin's."""
    entry = CATALOGUE["tool-cut-20"].responses
    assert json.loads(canonical_key(RESPONSES, entry)) == json.loads(canonical_key(CHAT, chat_twin(entry)))


def test_the_turn_is_read_from_the_input():
    first = {**BASE, "input": [{"role": "user", "content": "Write the file."}]}
    assert turn_of(RESPONSES, first) == 1
    assert turn_of(RESPONSES, CATALOGUE["tool-cut-20"].responses) == 1  # a trailing assistant prefill is no reply
    call = {"type": "function_call", "call_id": "c", "name": "write_file", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c", "output": "ok"}
    later = {**first, "input": [*first["input"], call, output]}
    assert turn_of(RESPONSES, later) == 2
    assert turn_of(RESPONSES, {**first, "input": [*later["input"], call, output]}) == 3
    parallel = {**first, "input": [*first["input"], call, {**call, "call_id": "d"}, output, {**output, "call_id": "d"}]}
    assert turn_of(RESPONSES, parallel) == 2  # two calls in one reply are one turn


@pytest.mark.parametrize("path", [RESPONSES, CHAT])
def test_top_logprobs_without_logprobs_is_a_400_in_llama_servers_words(server, path):
    """llama-server b11434 refuses it (tests/live/test_live_hardening.py); null is the field left out."""
    base = BASE if path == RESPONSES else CHAT_BASE
    status, _, body = post_json(server.url, path, {**base, "top_logprobs": 0})
    assert status == 400 and json.loads(body)["error"] == {
        "code": 400,
        "message": "top_logprobs requires logprobs to be set to true",
        "type": "invalid_request_error",
    }
    assert post_json(server.url, path, {**base, "top_logprobs": None})[0] == 200
