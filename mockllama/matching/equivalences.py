"""The equivalences of matching, one rule object each: its code, its docs row and its live cases.

Two requests llama-server generates the same from must match one recording. Each rule below is one
such equivalence (its kinds: ``rules``): what it does to the canonical form (``canonical`` applies
every rule, its code made once from these objects), its row of the table in docs/matching.md
(which requests match, and what llama-server does that makes it safe), and its live cases: pairs
of requests that tests/live/test_live_equivalences.py sends, each form to its own fresh
llama-server b11434, and that must generate the same there and get one key here. Its ``unlike``
cases are what the rule must not cover: they must generate something else there and get two keys
here. A rule without a live case fails tests/matching/test_equivalence_rules.py, and so does one
that none of its cases needs.

Anything no rule covers is kept as sent, so a difference that has not been proven harmless is a
miss. A new equivalence is one more rule in ``RULES``, on the routes it names in ``on``
(``CHAT``: /v1/chat/completions, and /v1/responses through its chat twin; ``MESSAGES``:
/v1/messages; ``EVERY``: any route, a request compared as sent included).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from mockllama.matching.rules import (
    ANY,
    CHAT,
    EVERY,
    MESSAGES,
    Case,
    Converted,
    Equivalence,
    LeftOut,
    Renamed,
    Rewritten,
    rules_table,
)
from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH, RESPONSES_PATH

# The code of the rules.


def sorted_keys(value):
    """An object with its keys in one order; any other value as it is."""
    return dict(sorted(value.items())) if isinstance(value, dict) else value


def _number(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _not_streamed(request: dict) -> dict:
    request["stream"] = request.get("stream") is True  # canonical's own object: changed in place
    return request


def _one_text_part(content):
    """One text part is the plain string; anything else stays as sent."""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        part = content[0]
        if part.get("type") in ("text", "input_text") and set(part) == {"type", "text"}:
            return part["text"]
    return content


def _null_is_empty(content):
    return "" if content is None else content


def _tool_keys(tool):
    """A tool's (or a tool call's) own keys and its function's in one order; its parameters as sent."""
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        return sorted_keys({**tool, "function": sorted_keys(tool["function"])})
    return tool


# llama-server's Anthropic conversion rewrites a `system` text that starts with this (Claude Code's
# billing header) block by block, so blocks joined are the string only when no later block does.
BILLING_HEADER = "x-anthropic-billing-header:"


def _system_text(system):
    """A `system` list of text blocks is their texts joined, as llama-server's Anthropic conversion
    reads it; a string, or a list with any other block, stays as sent."""
    if not isinstance(system, list):
        return system
    for block in system:
        if not (isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)):
            return system
    if any(block["text"].startswith(BILLING_HEADER) for block in system[1:]):
        return system
    return "".join(block["text"] for block in system)


def _tool_choice_as_converted(request: dict) -> dict:
    """An Anthropic `tool_choice` as llama-server's conversion reads it: `any`, or `tool` whatever its
    name, is chat's "required"; `auto` is chat's default, as is any other value (`none` included)."""
    if "tool_choice" in request:  # canonical's own object: changed in place
        choice = request.pop("tool_choice")
        if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
            request["tool_choice"] = "required"
    return request


def _without_tools(request: dict) -> bool:
    return not request.get("tools")


def _greedy(request: dict) -> bool:
    temperature = request.get("temperature")
    return isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature <= 0


# The requests the live cases vary.

COUNT = "Count from 1 to 200, separated by spaces."
BASE: dict[str, Any] = {"model": "x", "input": COUNT, "max_output_tokens": 8, "temperature": 0}
CHAT_BASE: dict[str, Any] = {
    "model": "x",
    "messages": [{"role": "user", "content": COUNT}],
    "max_tokens": 8,
    "temperature": 0,
}
# /v1/messages as the Anthropic SDK writes a message (role first), at temperature 0
MESSAGES_BASE: dict[str, Any] = {
    "max_tokens": 8,
    "messages": [{"role": "user", "content": COUNT}],
    "model": "x",
    "temperature": 0,
}
# A value of each field llama-server never reads (but model, user, metadata, stream_options: their own cases).
NEVER_READ: dict[str, Any] = {
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
# Issue 26: the seed request as another client library sends it.
OTHER_CLIENT: dict[str, Any] = {
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


@functools.cache
def catalogue() -> dict:
    """The bundled catalogue's entries by name, read on first use."""
    from mockllama.recordings.catalogue import load_catalogue

    return {entry.name: entry for entry in load_catalogue()}


def _copy(value):
    return json.loads(json.dumps(value))


def tool_request() -> dict:
    """tool-cut-20 as recorded: properties sent as path, content."""
    return _copy(catalogue()["tool-cut-20"].responses)


def reordered_properties(request: dict) -> dict:
    changed = _copy(request)
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
    request = tool_request()
    request.pop("tool_choice")
    request["input"] = [
        request["input"][0],
        call,
        {"call_id": "call_1", "output": "wrote 13 characters to /tmp/hello.txt", "type": "function_call_output"},
    ]
    request["max_output_tokens"] = 24
    return request


def _messages_tool_request() -> dict:
    """messages-tool-forced-cut-20 as recorded: each message's keys as content, role."""
    return _copy(catalogue()["messages-tool-forced-cut-20"].requests[0].json)


def _messages_tool_call() -> dict:
    """messages-tool-forced-finishes as recorded: a whole forced call, its arguments in the reply (a call
    cut at 20 tokens has none yet)."""
    return _copy(catalogue()["messages-tool-forced-finishes"].requests[0].json)


WRITE_FILE_PROMPT = "Write the text 'Hello, world!' to the file /tmp/hello.txt."


def sdk_tool_request(*tool_keys: str) -> dict:
    """The Anthropic SDK's tool request as a user writes it (no tool_choice, no prefill, temperature 0),
    the write_file tool's own keys in the order ``tool_keys`` (the Anthropic docs': name, description,
    input_schema); its input_schema as recorded."""
    (tool,) = _messages_tool_request()["tools"]
    return {
        "max_tokens": 20,
        "messages": [{"role": "user", "content": WRITE_FILE_PROMPT}],
        "model": "claude-x",
        "tools": [{key: tool[key] for key in tool_keys}],
        "temperature": 0,
    }


DOCS_ORDER, SORTED_ORDER = ("name", "description", "input_schema"), ("description", "input_schema", "name")


def _messages_field_cases(label: str, values: dict) -> list[Case]:
    """One /v1/messages case a field, the seed request with and without it; and all at once on the
    Anthropic SDK's tool request."""
    cases = [
        Case(
            f"{label}: messages {key} {json.dumps(value)}", MESSAGES_PATH, MESSAGES_BASE, {**MESSAGES_BASE, key: value}
        )
        for key, value in values.items()
    ]
    tool = sdk_tool_request(*DOCS_ORDER)
    cases.append(Case(f"{label}: messages, all at once, on a tool request", MESSAGES_PATH, tool, {**tool, **values}))
    return cases


def _reordered_schema(request: dict) -> dict:
    """The request with its first tool's input_schema properties in the other order."""
    changed = _copy(request)
    schema = changed["tools"][0]["input_schema"]
    schema["properties"] = _reversed_keys(schema["properties"])
    return changed


def _with_system(request: dict, system) -> dict:
    return {**request, "system": system}


def _role_first(request: dict) -> dict:
    return {**request, "messages": [{"role": m["role"], "content": m["content"]} for m in request["messages"]]}


def _field_cases(label: str, values: dict, *, tool: bool = True) -> list[Case]:
    """One case a field, the seed request with and without it; and all at once on a tool call."""
    cases = [
        Case(f"{label}: {key} {json.dumps(value)}", RESPONSES_PATH, BASE, {**BASE, key: value})
        for key, value in values.items()
    ]
    if tool:
        cases.append(
            Case(f"{label}: all at once, on a tool call", RESPONSES_PATH, tool_request(), {**tool_request(), **values})
        )
    return cases


RULES: tuple[Equivalence, ...] = (
    Converted(
        matches='`"input": "TEXT"`, `"input": [{"role": "user", "content": "TEXT"}]`, and an input item with or '
        'without `"type": "message"`',
        because="llama-server converts a Responses request into a chat request before it generates: a string "
        "input is one user message, and an item without a `type` is a message",
        cases=lambda: (
            Case(
                "string input = one user message",
                RESPONSES_PATH,
                BASE,
                {**BASE, "input": [{"role": "user", "content": COUNT}]},
            ),
            Case(
                "string content = one input_text part, with type message",
                RESPONSES_PATH,
                {**BASE, "input": [{"role": "user", "content": COUNT}]},
                {
                    **BASE,
                    "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": COUNT}]}],
                },
            ),
        ),
    ),
    Rewritten(
        matches='`"content": "TEXT"` and one text part, `[{"type": "text", "text": "TEXT"}]` '
        '(on Responses, `"input_text"`)',
        because="llama-server generates the same from one text part as from its text; two parts, or any other "
        "part, compare as sent. On `/v1/messages` its Anthropic conversion passes a text block on as a chat text "
        "part (`server_chat_convert_anthropic_to_oai`, server-chat.cpp:414)",
        at=("messages[].content",),
        rewrite=_one_text_part,
        on=(CHAT, MESSAGES),
        cases=lambda: (
            Case(
                "chat: string content = one text part",
                CHAT_PATH,
                CHAT_BASE,
                {**CHAT_BASE, "messages": [{"role": "user", "content": [{"type": "text", "text": COUNT}]}]},
            ),
            Case(
                "messages: string content = one text block",
                MESSAGES_PATH,
                MESSAGES_BASE,
                {**MESSAGES_BASE, "messages": [{"role": "user", "content": [{"type": "text", "text": COUNT}]}]},
            ),
        ),
    ),
    Rewritten(
        matches='a message\'s `"content": null` and `""`',
        because="llama-server reads a null content as empty: a null system message is an empty system turn, "
        "not no system message",
        at=("messages[].content",),
        rewrite=_null_is_empty,
        cases=lambda: (
            Case(
                "unrecorded: chat: a system message's null content = empty content",
                CHAT_PATH,
                {**CHAT_BASE, "messages": [{"role": "system", "content": ""}, *CHAT_BASE["messages"]]},
                {**CHAT_BASE, "messages": [{"role": "system", "content": None}, *CHAT_BASE["messages"]]},
            ),
        ),
        unlike=lambda: (
            Case(
                "chat: a system message with null content is not no system message",
                CHAT_PATH,
                CHAT_BASE,
                {**CHAT_BASE, "messages": [{"role": "system", "content": None}, *CHAT_BASE["messages"]]},
            ),
        ),
    ),
    Converted(
        matches='`"instructions": null` and `"instructions": ""`',
        because="llama-server adds a system turn whenever `instructions` is there, empty for null; so neither is "
        'the field left out: that generates something else (`"12345678"` instead of `"1. 1\\n2. "` for the seed '
        "request)",
        cases=lambda: (
            Case(
                "unrecorded: instructions null = instructions empty",
                RESPONSES_PATH,
                {**BASE, "instructions": ""},
                {**BASE, "instructions": None},
            ),
        ),
        unlike=lambda: (
            Case(
                "instructions null is not instructions left out", RESPONSES_PATH, BASE, {**BASE, "instructions": None}
            ),
            Case("instructions empty is not instructions left out", RESPONSES_PATH, BASE, {**BASE, "instructions": ""}),
            Case("another client's seed request, with its null instructions", RESPONSES_PATH, BASE, OTHER_CLIENT),
        ),
    ),
    Converted(
        matches="a `function_call` item with or without its `id` and `status`",
        because="llama-server's conversion reads a call's `call_id`, `name` and `arguments`, nothing else",
        cases=lambda: (
            Case(
                "function_call item with or without id and status",
                RESPONSES_PATH,
                _conversation_turn_2(with_ids=True),
                _conversation_turn_2(with_ids=False),
            ),
        ),
    ),
    LeftOut(
        matches="fields llama-server never reads for generation, with any value: {fields}",
        because="llama-server b11434 copies the Responses API's fields into the chat request and no code reads "
        "them (`text` not even with a `json_schema` format); `stream_options` changes no streamed text either "
        "(`test_stream_options_do_not_change_a_stream`). On `/v1/messages` the Anthropic conversion copies none "
        "of them; of `metadata` it keeps `user_id` as `__metadata_user_id`, which nothing reads "
        "(`server_chat_convert_anthropic_to_oai`, server-chat.cpp:609-616)",
        fields=dict.fromkeys(
            (
                "model",
                "stream_options",
                "user",
                "metadata",
                "include",
                "store",
                "truncation",
                "service_tier",
                "background",
                "max_tool_calls",
                "conversation",
                "prompt",
                "prompt_cache_key",
                "safety_identifier",
                "text",
            ),
            ANY,
        ),
        on=(EVERY,),
        cases=lambda: (
            Case(
                "model, user and metadata ignored",
                RESPONSES_PATH,
                BASE,
                {**BASE, "model": "gpt-anything", "user": "someone", "metadata": {"k": "v"}},
            ),
            *_field_cases("never read", NEVER_READ),
            Case(
                "never read: text with a json_schema format",
                RESPONSES_PATH,
                BASE,
                {**BASE, "text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object"}}}},
            ),
            # as another client library sends the seed request: include, metadata, previous_response_id
            # and user null, store false, top_p 1.0, truncation "disabled", tools []
            Case(
                "another client's seed request, less its instructions",
                RESPONSES_PATH,
                BASE,
                {key: value for key, value in OTHER_CLIENT.items() if key != "instructions"},
            ),
            *_messages_field_cases(
                "never read",
                {
                    "model": "claude-x",
                    "metadata": {"user_id": "user-1"},
                    "user": "someone",
                    "stream_options": {"include_usage": True},
                    **NEVER_READ,
                },
            ),
        ),
    ),
    LeftOut(
        matches="a field sent as llama-server's default, or as null, and the field left out: {fields}",
        because="llama-server generates with its default when the field is left out, and its request schema reads "
        "null as absent. Not for every field: null `tools` is a 400 on /v1/responses, null `instructions` a "
        "system turn, and null `temperature` samples at the server's default",
        fields={
            "tools": ([],),
            "previous_response_id": (None, ""),
            "reasoning": (None,),
            "tool_choice": (None, "auto"),
            "parallel_tool_calls": (None,),
            "n": (None, 1),
            "logprobs": (None, False),
            "top_logprobs": (None,),
            "frequency_penalty": (None, 0),
            "presence_penalty": (None, 0),
            "seed": (None,),
            "top_k": (None,),
            "top_p": (None,),
            "min_p": (None,),
        },
        cases=lambda: (
            Case("empty include and tools = absent", RESPONSES_PATH, BASE, {**BASE, "include": [], "tools": []}),
            # each default, or null, but tool_choice "auto" (below: it alone, and on a later turn with tools)
            *_field_cases(
                "default or null",
                {
                    "previous_response_id": None,
                    "reasoning": None,
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
                },
            ),
            Case("default or null: tool_choice auto", RESPONSES_PATH, BASE, {**BASE, "tool_choice": "auto"}),
            # what an agent loop (the AI SDK's) sends back: a later turn with its tools, tool_choice "auto"
            Case(
                "default or null: tool_choice auto on a function_call turn with tools",
                RESPONSES_PATH,
                _conversation_turn_2(with_ids=False),
                {**_conversation_turn_2(with_ids=False), "tool_choice": "auto"},
            ),
        ),
    ),
    LeftOut(
        matches="without tools, {fields}, and the field left out",
        because="without tools, llama-server does not read them",
        fields={"tool_choice": ("none",), "parallel_tool_calls": (True, False)},
        when=_without_tools,
        cases=lambda: (
            *_field_cases("without tools", {"tool_choice": "none", "parallel_tool_calls": True}, tool=False),
            Case(
                "without tools: parallel_tool_calls false", RESPONSES_PATH, BASE, {**BASE, "parallel_tool_calls": False}
            ),
        ),
        unlike=lambda: (
            Case(
                "tool_choice none with tools", RESPONSES_PATH, tool_request(), {**tool_request(), "tool_choice": "none"}
            ),
        ),
    ),
    LeftOut(
        matches="at `temperature` 0 (greedy decoding), any {fields}, and the field left out",
        because="the sampler keeps the likeliest token whatever they say; at any other temperature they count. "
        "A penalty counts even at 0: penalties apply before the temperature",
        fields=dict.fromkeys(("seed", "top_k", "top_p", "min_p"), ANY),
        when=_greedy,
        on=(CHAT, MESSAGES),
        cases=lambda: (
            *_field_cases("greedy", {"seed": 42, "top_k": 1, "top_p": 0.5, "min_p": 0.2}),
            *_messages_field_cases("greedy", {"seed": 42, "top_k": 1, "top_p": 0.5, "min_p": 0.2}),
        ),
        unlike=lambda: (
            Case("a penalty counts even at temperature 0", RESPONSES_PATH, BASE, {**BASE, "frequency_penalty": 1.5}),
        ),
    ),
    Rewritten(
        matches='`"stream": false` and no `stream`',
        because="llama-server streams only a request whose `stream` is true; null reads as false",
        at=("",),
        rewrite=_not_streamed,
        on=(EVERY,),
        cases=lambda: (
            Case("stream false = absent", RESPONSES_PATH, BASE, {**BASE, "stream": False}),
            Case("chat: stream false = absent", CHAT_PATH, CHAT_BASE, {**CHAT_BASE, "stream": False}),
            Case("messages: stream false = absent", MESSAGES_PATH, MESSAGES_BASE, {**MESSAGES_BASE, "stream": False}),
        ),
    ),
    Renamed(
        matches="`max_completion_tokens` and `max_tokens` (chat); on Responses, `max_output_tokens` is "
        "`max_tokens` through the conversion",
        because="another name for the same limit",
        names={"max_completion_tokens": "max_tokens"},
        cases=lambda: (
            Case(
                "chat: max_completion_tokens = max_tokens",
                CHAT_PATH,
                CHAT_BASE,
                {**{k: v for k, v in CHAT_BASE.items() if k != "max_tokens"}, "max_completion_tokens": 8},
            ),
        ),
    ),
    Rewritten(
        matches="`0` and `0.0` (any top-level number)",
        because="llama-server reads a number by its value",
        at=("*",),
        rewrite=_number,
        on=(EVERY,),
        cases=lambda: (
            Case("temperature 0 = 0.0", RESPONSES_PATH, BASE, {**BASE, "temperature": 0.0}),
            Case("messages: temperature 0 = 0.0", MESSAGES_PATH, MESSAGES_BASE, {**MESSAGES_BASE, "temperature": 0.0}),
        ),
    ),
    Rewritten(
        matches="key order at the top level",
        because="llama-server rebuilds the request object",
        at=("",),
        rewrite=sorted_keys,
        on=(EVERY,),
        cases=lambda: (
            Case(
                "top-level and message key order",
                RESPONSES_PATH,
                {**BASE, "input": [{"role": "user", "content": COUNT}]},
                _reversed_keys({**BASE, "input": [{"content": COUNT, "role": "user"}]}),
            ),
            Case(
                "messages: top-level key order, the SDK's and sorted",
                MESSAGES_PATH,
                sdk_tool_request(*SORTED_ORDER),
                dict(sorted(sdk_tool_request(*SORTED_ORDER).items())),
            ),
        ),
    ),
    Rewritten(
        matches="key order inside a message (`role, content` as the Anthropic SDK writes it, or `content, role`)",
        because="llama-server rebuilds each message; on `/v1/messages` only the message's own keys, anything "
        "nested compares as sent",
        at=("messages[]",),
        rewrite=sorted_keys,
        on=(CHAT, MESSAGES),
        cases=lambda: (
            Case(
                "messages: key order inside a message",
                MESSAGES_PATH,
                MESSAGES_BASE,
                {**MESSAGES_BASE, "messages": [{"content": COUNT, "role": "user"}]},
            ),
            Case(
                "messages: key order inside a message, with a prefill, on a tool call",
                MESSAGES_PATH,
                _role_first(_messages_tool_request()),
                _messages_tool_request(),
            ),
        ),
    ),
    Rewritten(
        matches="a tool's own key order (`name`, `description`, `input_schema` as the Anthropic "
        "docs write them, or any other)",
        because="llama-server's Anthropic conversion builds a chat tool of each tool's `name`, `description` and "
        "`input_schema`, in its own order (`server_chat_convert_anthropic_to_oai`, server-chat.cpp:548-565). Not "
        "inside `input_schema`: it becomes the chat tool's `parameters`, rendered in the order sent",
        at=("tools[]",),
        rewrite=sorted_keys,
        on=(MESSAGES,),
        cases=lambda: (
            Case(
                "messages: a tool's own key order, the Anthropic docs' and sorted, on the SDK's tool request",
                MESSAGES_PATH,
                sdk_tool_request(*SORTED_ORDER),
                sdk_tool_request(*DOCS_ORDER),
            ),
            Case(
                "messages: a tool's own key order, on a whole forced tool call",
                MESSAGES_PATH,
                _messages_tool_call(),
                {**_messages_tool_call(), "tools": [_reversed_keys(_messages_tool_call()["tools"][0])]},
            ),
        ),
        unlike=lambda: (
            Case(
                "messages: input_schema property order, on a whole forced tool call",
                MESSAGES_PATH,
                _messages_tool_call(),
                _reordered_schema(_messages_tool_call()),
            ),
        ),
    ),
    Rewritten(
        matches='`"system": "TEXT"` and a list of text blocks whose texts joined are TEXT (with '
        "or without `cache_control`)",
        because="llama-server's Anthropic conversion joins the texts of `system`'s text blocks into one system "
        "message, reading nothing else of a block (`server_chat_convert_anthropic_to_oai`, server-chat.cpp:351-373). "
        "A list with any other block compares as sent, and so does one with Claude Code's billing header after its "
        "first block, which the conversion rewrites block by block",
        at=("system",),
        rewrite=_system_text,
        on=(MESSAGES,),
        cases=lambda: (
            Case(
                "unrecorded: messages: system string = one text block",
                MESSAGES_PATH,
                _with_system(MESSAGES_BASE, "You count."),
                _with_system(MESSAGES_BASE, [{"type": "text", "text": "You count."}]),
            ),
            Case(
                "unrecorded: messages: system string = one text block with cache_control",
                MESSAGES_PATH,
                _with_system(MESSAGES_BASE, "You count."),
                _with_system(
                    MESSAGES_BASE, [{"type": "text", "text": "You count.", "cache_control": {"type": "ephemeral"}}]
                ),
            ),
            Case(
                "unrecorded: messages: system string = two text blocks joined",
                MESSAGES_PATH,
                _with_system(MESSAGES_BASE, "You count."),
                _with_system(MESSAGES_BASE, [{"type": "text", "text": "You "}, {"type": "text", "text": "count."}]),
            ),
            Case(
                "unrecorded: messages: system empty string = no text blocks",
                MESSAGES_PATH,
                _with_system(MESSAGES_BASE, ""),
                _with_system(MESSAGES_BASE, []),
            ),
        ),
        unlike=lambda: (
            Case(
                "messages: an empty system is not no system",
                MESSAGES_PATH,
                MESSAGES_BASE,
                _with_system(MESSAGES_BASE, ""),
            ),
        ),
    ),
    Rewritten(
        matches='a `tool_choice` read by its `type` alone: `{"type": "tool", "name": ...}`, '
        'whatever the name, and `{"type": "any"}`; `{"type": "auto"}`, `{"type": "none"}` and no `tool_choice`; '
        "with or without any other key (`disable_parallel_tool_use`)",
        because="llama-server's Anthropic conversion reads only the type: `any` and `tool` become chat's "
        '`"required"` (the name is dropped), `auto` becomes `"auto"`, chat\'s default, and any other type adds '
        "none, so `none` is the default too (`server_chat_convert_anthropic_to_oai`, server-chat.cpp:567-578; the "
        "default: `oaicompat_chat_params_parse`, server-common.cpp:1275)",
        at=("",),
        rewrite=_tool_choice_as_converted,
        on=(MESSAGES,),
        cases=lambda: (
            Case(
                "messages: tool_choice auto = absent, on the SDK's tool request",
                MESSAGES_PATH,
                sdk_tool_request(*DOCS_ORDER),
                {**sdk_tool_request(*DOCS_ORDER), "tool_choice": {"type": "auto"}},
            ),
            Case(
                "messages: tool_choice none = absent, on the SDK's tool request",
                MESSAGES_PATH,
                sdk_tool_request(*DOCS_ORDER),
                {**sdk_tool_request(*DOCS_ORDER), "tool_choice": {"type": "none"}},
            ),
            Case(
                "messages: tool_choice auto with disable_parallel_tool_use = absent",
                MESSAGES_PATH,
                sdk_tool_request(*DOCS_ORDER),
                {**sdk_tool_request(*DOCS_ORDER), "tool_choice": {"type": "auto", "disable_parallel_tool_use": True}},
            ),
            Case(
                "messages: tool_choice tool named write_file = any, on a whole forced tool call",
                MESSAGES_PATH,
                _messages_tool_call(),
                {**_messages_tool_call(), "tool_choice": {"type": "any"}},
            ),
            Case(
                "messages: tool_choice tool named read_file = named write_file, on a whole forced tool call",
                MESSAGES_PATH,
                _messages_tool_call(),
                {**_messages_tool_call(), "tool_choice": {"type": "tool", "name": "read_file"}},
            ),
        ),
    ),
    LeftOut(
        matches="{fields}, and the field left out",
        because="llama-server's Anthropic conversion sends `stop_sequences` on as chat's `stop`, and no `stop` is "
        "an empty list (`server_chat_convert_anthropic_to_oai`, server-chat.cpp:580-583; "
        "`oaicompat_chat_params_parse`, server-common.cpp:1286-1291); it reads `thinking` only when its type is "
        "`enabled` (server-chat.cpp:599-607)",
        fields={"stop_sequences": ([],), "thinking": ({"type": "disabled"}, {"type": "adaptive"})},
        on=(MESSAGES,),
        cases=lambda: (
            _messages_field_cases("as absent", {"stop_sequences": [], "thinking": {"type": "disabled"}})
            + [
                Case(
                    "as absent: messages thinking adaptive",
                    MESSAGES_PATH,
                    MESSAGES_BASE,
                    {**MESSAGES_BASE, "thinking": {"type": "adaptive"}},
                )
            ]
        ),
    ),
    LeftOut(
        matches="fields of the Anthropic API that llama-server's conversion does not copy, with any value: {fields}",
        because="llama-server's Anthropic conversion builds the chat request of `system`, `messages`, `tools`, "
        "`tool_choice`, `stop_sequences`, `max_tokens`, `temperature`, `top_p`, `top_k`, `stream`, "
        "`chat_template_kwargs`, `thinking` and `metadata` alone (`server_chat_convert_anthropic_to_oai`, "
        "server-chat.cpp:348-619)",
        fields=dict.fromkeys(
            (
                "cache_control",
                "container",
                "diagnostics",
                "inference_geo",
                "output_config",
                "speed",
                "user_profile_id",
                "workspace_id",
            ),
            ANY,
        ),
        on=(MESSAGES,),
        cases=lambda: _messages_field_cases(
            "not copied",
            {
                "cache_control": {"type": "ephemeral"},
                "container": "container_1",
                "diagnostics": {"previous_message_id": "msg_1"},
                "inference_geo": "us",
                "output_config": {"effort": "low"},
                "speed": "fast",
                "user_profile_id": "user-1",
                "workspace_id": "wrkspc_1",
            },
        ),
    ),
    Rewritten(
        matches="key order of a tool's own keys (`type`, `name`, `description`, `parameters`), and of a tool call's",
        because="llama-server rebuilds those objects. Not inside a tool's `parameters`: llama-server renders the "
        "schema in the order it was sent, and another order generates something else",
        at=("tools[]", "messages[].tool_calls[]"),
        rewrite=_tool_keys,
        cases=lambda: (
            Case(
                "a tool's own key order",
                RESPONSES_PATH,
                tool_request(),
                {**tool_request(), "tools": [_reversed_keys(tool_request()["tools"][0])]},
            ),
        ),
        unlike=lambda: (
            Case("tool schema property order", RESPONSES_PATH, tool_request(), reordered_properties(tool_request())),
        ),
    ),
)


def markdown_table() -> str:
    """The rules as the table of docs/matching.md."""
    return rules_table(RULES)
