"""The request pairs behind mockllama's matching rules, shared by the offline and live tiers.

EQUIVALENT pairs must get one canonical key (offline) and one generation from llama-server (live);
DIFFERENT pairs must get two keys and two generations.
"""

from __future__ import annotations

import json

from mockllama.recordings.catalogue import load_catalogue

RESPONSES, CHAT = "/v1/responses", "/v1/chat/completions"
COUNT = "Count from 1 to 200, separated by spaces."
CATALOGUE = {entry.name: entry for entry in load_catalogue()}


def _tool_request() -> dict:
    """tool-cut-20 as recorded: properties sent as path, content."""
    return json.loads(json.dumps(CATALOGUE["tool-cut-20"].responses))


def reordered_properties(request: dict) -> dict:
    changed = json.loads(json.dumps(request))
    schema = changed["tools"][0]["parameters"]
    schema["properties"] = dict(reversed(list(schema["properties"].items())))
    return changed


def _reversed_keys(value: dict) -> dict:
    return dict(reversed(list(value.items())))


def _conversation_turn_2(with_ids: bool) -> dict:
    """A second turn, carrying a function_call as the Responses API returned it (id, status) or bare."""
    call = {"arguments": "{\"path\": \"/tmp/hello.txt\", \"content\": \"Hello, world!\"}",
            "call_id": "call_1", "name": "write_file", "type": "function_call"}
    if with_ids:
        call.update({"id": "fc_1", "status": "completed"})
    request = _tool_request()
    request.pop("tool_choice")
    request["input"] = [request["input"][0], call,
                        {"call_id": "call_1", "output": "wrote 13 characters to /tmp/hello.txt",
                         "type": "function_call_output"}]
    request["max_output_tokens"] = 24
    return request


BASE = {"model": "x", "input": COUNT, "max_output_tokens": 8, "temperature": 0}
CHAT_BASE = {"model": "x", "messages": [{"role": "user", "content": COUNT}], "max_tokens": 8, "temperature": 0}

# (name, path, form A, form B): llama-server generates the same from both
EQUIVALENT = [
    ("string input = one user message", RESPONSES, BASE,
     {**BASE, "input": [{"role": "user", "content": COUNT}]}),
    ("string content = one input_text part, with type message", RESPONSES,
     {**BASE, "input": [{"role": "user", "content": COUNT}]},
     {**BASE, "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": COUNT}]}]}),
    ("chat: string content = one text part", CHAT, CHAT_BASE,
     {**CHAT_BASE, "messages": [{"role": "user", "content": [{"type": "text", "text": COUNT}]}]}),
    ("empty include and tools = absent", RESPONSES, BASE, {**BASE, "include": [], "tools": []}),
    ("stream false = absent", RESPONSES, BASE, {**BASE, "stream": False}),
    ("chat: stream false = absent", CHAT, CHAT_BASE, {**CHAT_BASE, "stream": False}),
    ("chat: max_completion_tokens = max_tokens", CHAT, CHAT_BASE,
     {**{k: v for k, v in CHAT_BASE.items() if k != "max_tokens"}, "max_completion_tokens": 8}),
    ("temperature 0 = 0.0", RESPONSES, BASE, {**BASE, "temperature": 0.0}),
    ("model, user and metadata ignored", RESPONSES, BASE,
     {**BASE, "model": "gpt-anything", "user": "someone", "metadata": {"k": "v"}}),
    ("top-level and message key order", RESPONSES, {**BASE, "input": [{"role": "user", "content": COUNT}]},
     _reversed_keys({**BASE, "input": [{"content": COUNT, "role": "user"}]})),
    ("a tool's own key order", RESPONSES, _tool_request(),
     {**_tool_request(), "tools": [_reversed_keys(_tool_request()["tools"][0])]}),
    ("function_call item with or without id and status", RESPONSES,
     _conversation_turn_2(with_ids=True), _conversation_turn_2(with_ids=False)),
]

# (name, path, form A, form B): llama-server generates something else, so they must not match
DIFFERENT = [
    ("tool schema property order", RESPONSES, _tool_request(), reordered_properties(_tool_request())),
]
