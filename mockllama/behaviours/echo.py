"""The ``spec`` behaviour's per-request step: a response object echoes the request that was sent.

A Responses object reports the settings it was made with (``temperature``, ``tools``,
``metadata``, ``previous_response_id``...). Those belong to the request, not to the recording,
so they are filled in for every request, after the cached reply (``replay.reply_for``) is built.
What was generated (text, arguments, usage, ids, timestamps) stays the recording's.
"""

from __future__ import annotations

import dataclasses
import json
from functools import cache, lru_cache

from mockllama.behaviours.fixed import corrects
from mockllama.behaviours.reply import Reply
from mockllama.recordings.cassettes import Interaction
from mockllama.wire import sse

# What a response object says for a setting the request did not send (or sent as null).
# Sampling defaults are llama-server b11434's own, as its /props reports them (recorded in the
# server-info scenario): they are what generation used. The others follow the Open Responses
# document; `store` and `background` are false because nothing is stored or run in the background.
SAMPLING_DEFAULTS = {
    "temperature": 0.8,
    "top_p": 0.95,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "top_logprobs": 0,
}
DEFAULTS: dict[str, object] = {
    "previous_response_id": None,
    "instructions": None,
    "tools": [],
    "tool_choice": "auto",
    "truncation": "disabled",
    "parallel_tool_calls": True,
    "text": {"format": {"type": "text"}},
    **SAMPLING_DEFAULTS,
    "reasoning": {"effort": None, "summary": None},
    "max_output_tokens": None,
    "max_tool_calls": None,
    "store": False,
    "background": False,
    "service_tier": "default",
    "metadata": {},
    "safety_identifier": None,
    "prompt_cache_key": None,
}
# A function tool as the Open Responses document requires it; `strict` defaults to true there.
FUNCTION_TOOL = {"type": "function", "name": None, "description": None, "parameters": None, "strict": True}

# Bodies up to this size have their echoed reply remembered, as the matcher remembers selections.
REMEMBERED_BODY_BYTES = 64 * 1024


def normal_tool(tool):
    """A sent function tool with every field the document requires; other tools as sent."""
    if isinstance(tool, dict) and tool.get("type") == "function":
        return {**FUNCTION_TOOL, **tool}
    return tool


def _echoed_value(key: str, sent):
    default = DEFAULTS[key]
    if sent is None:
        return default
    if key == "tools" and isinstance(sent, list):
        return [normal_tool(tool) for tool in sent]
    if isinstance(default, dict) and default and isinstance(sent, dict):  # text, reasoning: fill what is missing
        return {**default, **sent}
    return sent


def request_settings(request) -> dict:
    """The response-object fields a request decides: what it sent, else the default."""
    request = request if isinstance(request, dict) else {}
    return {key: _echoed_value(key, request.get(key)) for key in DEFAULTS}


@cache  # one entry per cached reply (replay.reply_for keeps them all anyway)
def _response_objects(reply: Reply) -> tuple[tuple[int, dict], ...]:
    """Where the reply's response objects are, parsed once: (-1, body), or (event position, payload)."""
    if reply.events is None:
        return ((-1, json.loads(reply.body)),)
    found = []
    for position, event in enumerate(reply.events):
        payload = event.json() if b'"response":' in event.raw else None
        if isinstance(payload, dict) and isinstance(payload.get("response"), dict):
            found.append((position, payload))
    return tuple(found)


@cache  # one entry per recorded interaction
def _recorded_settings(interaction: Interaction) -> dict:
    return request_settings(interaction.request_json)


def _echo(reply: Reply, interaction: Interaction, sent: bytes) -> Reply:
    try:
        request = json.loads(sent)
    except ValueError:  # answered by a recording of the very same bytes: nothing to echo
        return reply
    settings = request_settings(request)
    if settings == _recorded_settings(interaction):
        return reply  # the cached reply already says exactly this
    objects = _response_objects(reply)
    if reply.events is None:
        body = {**objects[0][1], **settings}
        return dataclasses.replace(reply, body=sse.dump_json(body).encode("utf-8"))
    events = list(reply.events)  # only the events that carry a response object change
    for position, payload in objects:
        echoed = {**payload, "response": {**payload["response"], **settings}}
        events[position] = sse.make_event(events[position].name, echoed)
    return dataclasses.replace(reply, body=b"".join(event.raw for event in events), events=tuple(events))


_remembered_echo = lru_cache(maxsize=256)(_echo)


def echo(reply: Reply, interaction: Interaction, sent: bytes) -> Reply:
    """``reply`` (the cached ``spec`` reply) with its response objects echoing ``sent``."""
    if not corrects(interaction):
        return reply  # error replies, chat completions and messages carry no response object
    if len(sent) > REMEMBERED_BODY_BYTES:
        return _echo(reply, interaction, sent)
    return _remembered_echo(reply, interaction, sent)
