"""The keys a request is looked up by, each made from its canonical form alone (``canonical``).

The exact key is the canonical form as JSON text, in the key order the form gives it; the others
are that key less something a lookup must not hold against a request: every key order (for a
recording whose body vcrpy stored as a mapping), the token limit (a sweep's positions), or the
history after the model's first reply (a later turn of a conversation).
"""

from __future__ import annotations

import json

from mockllama.recordings.chat_twin import replies_carried

# Made once: json.dumps makes an encoder on every call with other than its default options.
_KEY_TEXT = json.JSONEncoder(ensure_ascii=False).encode
_UNORDERED_KEY_TEXT = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def exact_key(canonical) -> str:
    """The exact-match key: canonical JSON, with the key order the canonical form gives it."""
    return _KEY_TEXT(canonical)


def unordered_key(canonical) -> str:
    """The key with every key order ignored: for recordings whose body vcrpy stored as a YAML
    mapping (recorded with aiohttp's ``json=``, as mockllama did before it sent text), which cannot
    tell the order it was sent in."""
    return _UNORDERED_KEY_TEXT(canonical)


def limitless_key(canonical) -> str:
    """The exact-match key of the request less its token limit: what every position of a sweep
    (recordings.sweeps) shares."""
    if isinstance(canonical, dict):
        canonical = {key: value for key, value in canonical.items() if key != "max_tokens"}
    return _KEY_TEXT(canonical)


def conversation_key(canonical, turn: int) -> str | None:
    """What every later turn of one conversation shares: the request with its history cut back to the
    end of the model's first reply (``first_exchange``), so that a later turn matches only a
    conversation whose first turn and first reply its history really holds, a prefill included.
    None for a request that carries no reply yet (``turn``: ``chat_twin.turn_of`` the request)."""
    messages = canonical.get("messages") if isinstance(canonical, dict) else None
    if not isinstance(messages, list) or turn < 2:
        return None
    return _KEY_TEXT({**canonical, "messages": first_exchange(messages)})


def first_exchange(messages: list) -> list:
    """What every later turn of one conversation carries first: the first turn's messages (an
    assistant prefill included) and the model's first reply, up to the end of that reply. Later
    turns add tool outputs and replies after it, which may differ (a tool's output is the client's).

    The reply is compared as a client sends it back: without its call ids (each recorded reply has
    its own, and a client may give its own), with its arguments as JSON values (a client may
    write them again, compact), and without an empty ``content`` beside its calls."""
    for index, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "assistant" and replies_carried(messages[index:]):
            end = index
            while end < len(messages) and isinstance(messages[end], dict) and messages[end].get("role") == "assistant":
                end += 1
            return [*messages[:index], *(_as_reply(message) for message in messages[index:end])]
    return messages


def _as_reply(message: dict) -> dict:
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return message
    reply = {key: value for key, value in message.items() if not (key == "content" and value in ("", None))}
    reply["tool_calls"] = [_call_as_sent_back(call) for call in calls]
    return reply


def _call_as_sent_back(call) -> object:
    if not isinstance(call, dict):
        return call
    sent_back = {key: value for key, value in call.items() if key != "id"}
    function = call.get("function")
    if isinstance(function, dict) and isinstance(function.get("arguments"), str):
        sent_back["function"] = {**function, "arguments": _arguments(function["arguments"])}
    return sent_back


def _arguments(text: str) -> str:
    """Arguments that parse as JSON, written compact (so any spacing is one); others as sent."""
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return text
