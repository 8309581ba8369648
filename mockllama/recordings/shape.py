"""Load-time checks on what each recorded interaction holds, so that a cassette which loads can
also be served, explained and listed: anything the behaviours rely on is checked here, once.

Replies that no behaviour transforms (errors, chat completions, /v1/messages) are replayed as
recorded and need only be sendable. A successful /v1/responses reply is rewritten by ``fixed`` and
``spec`` and read by ``explain``, so its shape is checked as llama-server writes it.
"""

from __future__ import annotations

import json
import re

from mockllama.wire import sse
from mockllama.wire.headers import UNSENDABLE_IN_A_HEADER
from mockllama.wire.routes import CHAT_PATH

# RFC 9110 token characters for a header name; a value may hold no control characters at all,
# above all no line break, which would end the header block early.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE_BAD = UNSENDABLE_IN_A_HEADER
# A scenario's name and its chat twin's finish_reason go into reply headers (X-Mockllama-Scenario,
# X-Mockllama-Decided-By), where aiohttp refuses any control character but a tab: and a tab at
# either end of a name would be lost there, so none at all.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# JSON writes a control character in a string as an escape (DEL may stay as it is): only a reply
# whose finish_reason holds either is parsed to look closer.
_ODD_FINISH_REASON = re.compile(rb'"finish_reason"\s*:\s*"[^"]*[\\\x7f]')
USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens")
USAGE_DETAILS = ("input_tokens_details", "output_tokens_details")  # spec spreads them into its own
TERMINAL_EVENTS = ("response.completed", "response.incomplete")


def header_problem(name, value) -> str | None:
    if not isinstance(name, str) or not _HEADER_NAME.match(name):
        return f"response header name {name!r} is not a valid HTTP header name"
    if not isinstance(value, str):
        return f"response header {name!r} has a value that is not a string: {value!r}"
    if _HEADER_VALUE_BAD.search(value):
        return f"response header {name!r} holds a line break or control character: {value!r}"
    return None


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a scenario, or None."""
    if _CONTROL.search(name):
        return f"the scenario name {name!r} holds a control character, and a name goes into a reply header"
    return None


def _finish_reason_problem(payloads: list) -> str | None:
    """A chat reply's finish_reason that could not go into X-Mockllama-Decided-By, or None."""
    for payload in payloads:
        choices = payload.get("choices") if isinstance(payload, dict) else None
        for choice in choices if isinstance(choices, list) else ():
            reason = choice.get("finish_reason") if isinstance(choice, dict) else None
            if isinstance(reason, str) and _CONTROL.search(reason):
                return f"its finish_reason {reason!r} holds a control character, and it goes into a reply header"
    return None


def _item_problem(item, where: str) -> str | None:
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        return f'{where} is not an output item object with a "type"'
    # fixed, spec and the variants key items by id (which calls have their arguments announced)
    if "id" in item and not isinstance(item["id"], str):
        return f'{where} has an "id" that is not a string'
    if item["type"] == "message":
        content = item.get("content", [])
        if not isinstance(content, list) or not all(isinstance(part, dict) for part in content):
            return f"{where}.content is not a list of content objects"
    if item["type"] == "function_call" and not isinstance(item.get("arguments", ""), str):
        return f"{where}.arguments is not a string"
    return None


def response_object_problem(response, where: str) -> str | None:
    """What stops ``fixed``, ``spec`` and ``explain`` from reading a Responses object, or None."""
    if not isinstance(response, dict):
        return f"{where} is not a JSON object"
    for key, kind, label in (
        ("id", str, "a string"),
        ("model", str, "a string"),
        ("status", str, "a string"),
        ("created_at", (int, float), "a number"),
    ):
        if not isinstance(response.get(key), kind) or isinstance(response.get(key), bool):
            return f"{where} has no {key!r} that is {label}"
    return output_and_usage_problem(response, where)


def output_and_usage_problem(response: dict, where: str) -> str | None:
    """What stops the behaviours from reading any response object's output and usage, or None: the
    variants rewrite every terminal event's (``response.failed`` too), spec every one's usage."""
    output = response.get("output", [])
    if not isinstance(output, list):
        return f"{where}.output is not a list"
    for index, item in enumerate(output):
        problem = _item_problem(item, f"{where}.output[{index}]")
        if problem:
            return problem
    usage = response.get("usage")
    if usage is not None and not (
        isinstance(usage, dict)
        and all(isinstance(usage.get(key), int) and not isinstance(usage.get(key), bool) for key in USAGE_FIELDS)
    ):
        return f"{where}.usage is not an object with integer {', '.join(USAGE_FIELDS)}"
    details = usage or {}
    for key in USAGE_DETAILS:
        if details.get(key) is not None and not isinstance(details[key], dict):
            return f"{where}.usage.{key} is not an object"
    return None


def _event_problem(payload, number: int) -> str | None:
    if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):
        return f'stream event {number} is not a JSON object with a "type"'
    if "item" in payload:
        problem = _item_problem(payload["item"], f"stream event {number} item")
        if problem:
            return problem
        if payload["type"] == "response.output_item.added" and not isinstance(payload["item"].get("id"), str):
            return f'stream event {number} adds an item without an "id"'
    needs_item_id = payload["type"].startswith(("response.content_part.", "response.output_text."))
    if ("item_id" in payload or needs_item_id) and not isinstance(payload.get("item_id"), str):
        return f'stream event {number} has no "item_id" string'
    if "part" in payload and not isinstance(payload["part"], dict):
        return f'stream event {number} has a "part" that is not an object'
    if "delta" in payload and not isinstance(payload["delta"], str):  # spec joins reasoning deltas
        return f'stream event {number} has a "delta" that is not a string'
    if "response" in payload and not isinstance(payload["response"], dict):
        return f'stream event {number} has a "response" that is not an object'
    where = f"stream event {number} ({payload['type']}) response"
    if payload["type"] in TERMINAL_EVENTS:
        return response_object_problem(payload["response"] if "response" in payload else None, where)
    return output_and_usage_problem(payload["response"], where) if "response" in payload else None


def _stream_problem(payloads: list) -> str | None:
    """What is wrong with a Responses stream, given each event's data as JSON (``sse.payloads``)."""
    terminal = False
    for number, payload in enumerate(payloads, start=1):
        problem = _event_problem(payload, number)
        if problem:
            return problem
        terminal = terminal or payload["type"] in TERMINAL_EVENTS
    return None if terminal else "the stream has no response.completed event"


def _is_json_data(value) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


# Header lines found sendable: thousands of recordings repeat most of theirs.
_SENDABLE: set[tuple[str, str]] = set()


def reply_problem(interaction) -> str | None:
    """Why this recorded interaction cannot be served, or None. ``interaction`` is a cassettes.Interaction."""
    if not 100 <= interaction.status <= 599:
        return f"status {interaction.status} is not an HTTP status"
    if interaction.status < 200:  # RFC 9110 section 15.2: an interim reply, never the final one
        return (
            f"status {interaction.status} is informational (1xx), not a final reply: a client it "
            "were replayed to would wait forever for the reply after it"
        )
    if _HEADER_VALUE_BAD.search(interaction.reason) or "\t" in interaction.reason:
        return f"its status message {interaction.reason!r} holds a line break or control character"
    # A body parsed from the bytes sent is JSON data; one vcrpy stored as a YAML mapping may hold
    # anything YAML does (dates, binary).
    if interaction.request_raw is None and not _is_json_data(interaction.request_json):
        return "its request body holds values that are not JSON data (dates, binary, ...)"
    for pair in interaction.headers:
        if pair[1].__class__ is str and pair in _SENDABLE:  # a value from YAML may be a list: unhashable
            continue
        problem = header_problem(*pair)
        if problem:
            return problem
        if len(_SENDABLE) < 4096:  # both strings, as header_problem found
            _SENDABLE.add(pair)
    text = None
    if interaction.is_event_stream:
        try:  # as a whole: its blocks are cut at blank lines, which never fall inside a character
            text = interaction.body.decode("utf-8")
        except UnicodeDecodeError:
            return "the recorded stream is not UTF-8 text"
    if interaction.path == CHAT_PATH and _ODD_FINISH_REASON.search(interaction.body):
        return _finish_reason_problem(sse.payloads(text) if text is not None else [interaction.body_json])
    if interaction.path != "/v1/responses" or interaction.status != 200:
        return None
    if not isinstance(interaction.request_json, dict):
        return "its request body is not a JSON object"
    if text is not None:
        return _stream_problem(sse.payloads(text))
    return response_object_problem(interaction.body_json, "the body")
