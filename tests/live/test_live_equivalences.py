"""Live proof of every equivalence mockllama's matching uses (the rules of mockllama/matching/equivalences.py).

Each case sends two forms of one request to llama-server b11434 and compares what was generated
(text, function calls, finish reason; not ids or timestamps). Two fresh servers get the same
sequence of cases, one the first forms and one the second forms, so their prompt caches have
the same history (a long reply can depend on it) and a difference can only come from the form. An equivalence case
passes only when the outputs are equal AND mockllama gives both forms the same canonical key;
the order case passes only when llama-server generates something else AND the keys differ. So
the matching rules and llama-server's behaviour cannot drift apart unnoticed.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from mockllama.matching.pipeline import canonical_key
from support.equivalences import CHAT, CHAT_BASE, DIFFERENT, EQUIVALENT, MESSAGES

pytestmark = pytest.mark.live


def _post(url: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=900) as response:  # a loaded CI machine is slow
        return json.loads(response.read())


def generated(url: str, path: str, body: dict):
    """What the model produced, without the ids and timestamps that differ on every call."""
    reply = _post(url, path, body)
    if path == CHAT:
        choice = reply["choices"][0]
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in choice["message"].get("tool_calls") or []]
        return choice["message"].get("content"), calls, choice["finish_reason"]
    if path == MESSAGES:
        blocks = [{k: v for k, v in block.items() if k != "id"} for block in reply["content"]]
        return blocks, reply["stop_reason"], reply["usage"]["output_tokens"]
    items = []
    for item in reply["output"]:
        if item["type"] == "function_call":
            items.append(("function_call", item["name"], item["arguments"]))
        else:
            items.append((item["type"], [part.get("text") for part in item.get("content") or []]))
    return items, reply["usage"]["output_tokens"]


@pytest.fixture(scope="module")
def twin_servers(start_llama_server):
    """Two fresh servers: one for every first form, one for every second form."""
    return start_llama_server(), start_llama_server()


@pytest.mark.parametrize(("name", "path", "first", "second"), EQUIVALENT, ids=[case[0] for case in EQUIVALENT])
def test_llama_server_generates_the_same_from_both_forms(twin_servers, name, path, first, second):
    assert canonical_key(path, first) == canonical_key(path, second), "mockllama must treat them as one request"
    one, other = twin_servers
    assert generated(one.url, path, first) == generated(other.url, path, second)


@pytest.mark.parametrize(("name", "path", "first", "second"), DIFFERENT, ids=[case[0] for case in DIFFERENT])
def test_llama_server_generates_something_else_so_they_must_not_match(twin_servers, name, path, first, second):
    assert canonical_key(path, first) != canonical_key(path, second), "mockllama must keep them apart"
    one, other = twin_servers
    assert generated(one.url, path, first) != generated(other.url, path, second)


def test_stream_options_do_not_change_a_stream(twin_servers):
    """stream_options is ignored by matching; on a stream, it changes no generated text."""

    def text(url, body):
        request = urllib.request.Request(url + CHAT, json.dumps(body).encode(), {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=900) as response:  # a loaded CI machine is slow
            chunks = [
                json.loads(line[6:]) for line in response.read().decode().splitlines() if line.startswith("data: {")
            ]
        return "".join((c["choices"][0]["delta"].get("content") or "") for c in chunks if c.get("choices"))

    plain = {**CHAT_BASE, "stream": True}
    with_options = {**plain, "stream_options": {"include_usage": True}}
    assert canonical_key(CHAT, plain) == canonical_key(CHAT, with_options)
    one, other = twin_servers
    assert text(one.url, plain) == text(other.url, with_options) != ""
