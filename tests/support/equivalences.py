"""The request pairs behind mockllama's matching rules, shared by the offline and live tiers.

EQUIVALENT pairs must get one canonical key (offline) and one generation from llama-server (live);
DIFFERENT pairs must get two keys and two generations.
"""

from __future__ import annotations

import json

from mockllama.recordings.catalogue import load_catalogue

RESPONSES, CHAT, MESSAGES = "/v1/responses", "/v1/chat/completions", "/v1/messages"
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
    call = {
        "arguments": '{"path": "/tmp/hello.txt", "content": "Hello, world!"}',
        "call_id": "call_1",
        "name": "write_file",
        "type": "function_call",
    }
    if with_ids:
        call.update({"id": "fc_1", "status": "completed"})
    request = _tool_request()
    request.pop("tool_choice")
    request["input"] = [
        request["input"][0],
        call,
        {"call_id": "call_1", "output": "wrote 13 characters to /tmp/hello.txt", "type": "function_call_output"},
    ]
    request["max_output_tokens"] = 24
    return request


BASE = {"model": "x", "input": COUNT, "max_output_tokens": 8, "temperature": 0}
CHAT_BASE = {"model": "x", "messages": [{"role": "user", "content": COUNT}], "max_tokens": 8, "temperature": 0}
# /v1/messages as the Anthropic SDK writes a message (role first), at temperature 0
MESSAGES_BASE = {"max_tokens": 8, "messages": [{"role": "user", "content": COUNT}], "model": "x", "temperature": 0}


def _messages_tool_request() -> dict:
    """messages-tool-forced-cut-20 as recorded: each message's keys as content, role."""
    return json.loads(json.dumps(CATALOGUE["messages-tool-forced-cut-20"].requests[0].json))


def _role_first(request: dict) -> dict:
    return {**request, "messages": [{"role": m["role"], "content": m["content"]} for m in request["messages"]]}


# (name, path, form A, form B): llama-server generates the same from both
EQUIVALENT = [
    ("string input = one user message", RESPONSES, BASE, {**BASE, "input": [{"role": "user", "content": COUNT}]}),
    (
        "string content = one input_text part, with type message",
        RESPONSES,
        {**BASE, "input": [{"role": "user", "content": COUNT}]},
        {**BASE, "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": COUNT}]}]},
    ),
    (
        "chat: string content = one text part",
        CHAT,
        CHAT_BASE,
        {**CHAT_BASE, "messages": [{"role": "user", "content": [{"type": "text", "text": COUNT}]}]},
    ),
    ("empty include and tools = absent", RESPONSES, BASE, {**BASE, "include": [], "tools": []}),
    ("stream false = absent", RESPONSES, BASE, {**BASE, "stream": False}),
    ("chat: stream false = absent", CHAT, CHAT_BASE, {**CHAT_BASE, "stream": False}),
    (
        "chat: max_completion_tokens = max_tokens",
        CHAT,
        CHAT_BASE,
        {**{k: v for k, v in CHAT_BASE.items() if k != "max_tokens"}, "max_completion_tokens": 8},
    ),
    ("temperature 0 = 0.0", RESPONSES, BASE, {**BASE, "temperature": 0.0}),
    (
        "model, user and metadata ignored",
        RESPONSES,
        BASE,
        {**BASE, "model": "gpt-anything", "user": "someone", "metadata": {"k": "v"}},
    ),
    (
        "top-level and message key order",
        RESPONSES,
        {**BASE, "input": [{"role": "user", "content": COUNT}]},
        _reversed_keys({**BASE, "input": [{"content": COUNT, "role": "user"}]}),
    ),
    (
        "a tool's own key order",
        RESPONSES,
        _tool_request(),
        {**_tool_request(), "tools": [_reversed_keys(_tool_request()["tools"][0])]},
    ),
    (
        "messages: key order inside a message",
        MESSAGES,
        MESSAGES_BASE,
        {**MESSAGES_BASE, "messages": [{"content": COUNT, "role": "user"}]},
    ),
    (
        "messages: key order inside a message, with a prefill, on a tool call",
        MESSAGES,
        _role_first(_messages_tool_request()),
        _messages_tool_request(),
    ),
    (
        "function_call item with or without id and status",
        RESPONSES,
        _conversation_turn_2(with_ids=True),
        _conversation_turn_2(with_ids=False),
    ),
]

# Issue 26: fields other clients send, settled from llama-server b11434's own request parsing
# (the Responses-to-chat conversion and the sampling schema) and proved here one at a time, on a
# text and on a tool-call recording, at temperature 0.
OTHER_CLIENT = {
    "include": None,
    "input": COUNT,
    "instructions": None,
    "max_output_tokens": 8,
    "metadata": None,
    "model": "gpt-4o-mini",
    "previous_response_id": None,
    "store": False,
    "stream": False,
    "temperature": 0.0,
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "user": None,
}
# fields llama-server never reads, with values clients send
NEVER_READ = {
    "include": None,
    "store": True,
    "truncation": "auto",
    "service_tier": "auto",
    "background": False,
    "max_tool_calls": None,
    "conversation": None,
    "prompt": None,
    "prompt_cache_key": "key-1",
    "safety_identifier": "user-1",
    "text": {"format": {"type": "text"}},
}
# a field sent with its default, or null, which llama-server reads as absent
DEFAULTS = {
    "previous_response_id": None,
    "reasoning": None,
    "tool_choice": "auto",
    "parallel_tool_calls": None,
    "n": 1,
    "logprobs": False,
    "top_logprobs": None,
    "frequency_penalty": 0,
    "presence_penalty": 0.0,
    "seed": None,
    "top_k": None,
    "top_p": None,
    "min_p": None,
}
# under greedy decoding (temperature 0) the sampler's other settings cannot change the token
GREEDY = {"seed": 42, "top_k": 1, "top_p": 0.5, "min_p": 0.2}
# without tools, the tool settings are not read
NO_TOOLS = {"tool_choice": "none", "parallel_tool_calls": True}
_TOOL = _tool_request()


def _fields(label: str, values: dict, *, tool: bool = True) -> list:
    cases = [
        (f"{label}: {key} {json.dumps(value)}", RESPONSES, BASE, {**BASE, key: value}) for key, value in values.items()
    ]
    if tool:
        cases.append((f"{label}: all at once, on a tool call", RESPONSES, _TOOL, {**_TOOL, **values}))
    return cases


EQUIVALENT += [
    (
        "another client's seed request, less its instructions",
        RESPONSES,
        BASE,
        {key: value for key, value in OTHER_CLIENT.items() if key != "instructions"},
    ),
    *_fields("never read", NEVER_READ),
    (
        "never read: text with a json_schema format",
        RESPONSES,
        BASE,
        {**BASE, "text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object"}}}},
    ),
    *_fields("default or null", {key: value for key, value in DEFAULTS.items() if key != "tool_choice"}),
    ("default or null: tool_choice auto", RESPONSES, BASE, {**BASE, "tool_choice": "auto"}),
    # what an agent loop (the AI SDK's) sends back: a later turn with its tools, tool_choice "auto"
    (
        "default or null: tool_choice auto on a function_call turn with tools",
        RESPONSES,
        _conversation_turn_2(with_ids=False),
        {**_conversation_turn_2(with_ids=False), "tool_choice": "auto"},
    ),
    *_fields("greedy", GREEDY),
    *_fields("without tools", NO_TOOLS, tool=False),
    ("without tools: parallel_tool_calls false", RESPONSES, BASE, {**BASE, "parallel_tool_calls": False}),
    (
        "unrecorded: chat: a system message's null content = empty content",
        CHAT,
        {**CHAT_BASE, "messages": [{"role": "system", "content": ""}, *CHAT_BASE["messages"]]},
        {**CHAT_BASE, "messages": [{"role": "system", "content": None}, *CHAT_BASE["messages"]]},
    ),
    (
        "unrecorded: instructions null = instructions empty",
        RESPONSES,
        {**BASE, "instructions": ""},
        {**BASE, "instructions": None},
    ),
]

# (name, path, form A, form B): llama-server generates something else, so they must not match
DIFFERENT = [
    ("tool schema property order", RESPONSES, _tool_request(), reordered_properties(_tool_request())),
    ("instructions null is not instructions left out", RESPONSES, BASE, {**BASE, "instructions": None}),
    ("instructions empty is not instructions left out", RESPONSES, BASE, {**BASE, "instructions": ""}),
    ("another client's seed request, with its null instructions", RESPONSES, BASE, OTHER_CLIENT),
    (
        "chat: a system message with null content is not no system message",
        CHAT,
        CHAT_BASE,
        {**CHAT_BASE, "messages": [{"role": "system", "content": None}, *CHAT_BASE["messages"]]},
    ),
    ("a penalty counts even at temperature 0", RESPONSES, BASE, {**BASE, "frequency_penalty": 1.5}),
    ("tool_choice none with tools", RESPONSES, _TOOL, {**_TOOL, "tool_choice": "none"}),
]
