"""The canonical form of a request: the chat request llama-server generates from.

llama-server turns a ``/v1/responses`` request into a chat request before it generates, so two
requests that become the same chat request get the same generation. The canonical form is that
chat request (through :func:`catalogue.chat_twin`, the one conversion the recorder also uses),
with every equivalence below applied. Each one was seen to hold on a live llama-server b11434:
tests/live/test_live_equivalences.py sends both forms to a fresh server and compares the output.

- A text part list with one part, ``[{"type": "input_text"|"text", "text": T}]``, is the string T;
  a message's null ``content`` is ``""``.
- An input item without ``"type"`` is a ``"message"`` (chat_twin reads it so).
- Fields llama-server never reads for generation are ignored, whatever they say: ``model``,
  ``stream_options``, ``user``, ``metadata``, and the Responses API's ``include``, ``store``,
  ``truncation``, ``service_tier``, ``background``, ``max_tool_calls``, ``conversation``,
  ``prompt``, ``prompt_cache_key``, ``safety_identifier`` and ``text`` (llama-server b11434 copies
  them into the chat request and no code reads them).
- A field sent with the value llama-server takes when it is left out is the field left out (its
  JSON null included: llama-server reads null as absent): see ``DEFAULT_VALUES``. Without tools,
  ``tool_choice: "none"`` and any ``parallel_tool_calls`` are left out too.
- At ``temperature`` 0 (greedy decoding) the sampler keeps the likeliest token whatever ``seed``,
  ``top_k``, ``top_p`` and ``min_p`` say, so they are left out; at any other temperature they count.
- ``instructions`` is never the field left out, not even null or ``""``: llama-server then renders
  an empty system turn, and generates something else (chat_twin keeps it so).
- ``"stream": false`` is no ``stream``.
- ``max_completion_tokens`` (and Responses' ``max_output_tokens``) is ``max_tokens``.
- A top-level number compares by value: ``0`` is ``0.0``.
- Key order does not matter at the top level, inside a message, or in a tool's own keys
  (llama-server rebuilds those objects), but it does matter inside a tool's ``parameters``:
  llama-server renders the schema in the order it was sent, and another order generates
  something else.
- On ``/v1/messages`` (Anthropic) only these hold: the ignored fields, ``"stream": false``, top-level
  numbers and key order, and key order inside a message; anything else nested compares as sent.

Anything else is kept as sent, so a difference that has not been proven harmless is a miss.
"""

from __future__ import annotations

from typing import overload

from mockllama.recordings.chat_twin import chat_twin
from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH, RESPONSES_PATH

# llama-server does not read these: the same generation whatever they say (tests/live proves each).
IGNORED_FIELDS = frozenset(
    {
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
    }
)
# These, sent with one of these values, are the field left out: llama-server's own default, and null,
# which its request schema reads as absent. Not for every field: null tools is a 400 on
# /v1/responses, null instructions a system turn, and null temperature samples at the server's.
DEFAULT_VALUES: dict[str, tuple[object, ...]] = {
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
}
# Without tools, llama-server does not read these: any value is the field left out.
TOOL_ONLY_FIELDS: dict[str, tuple[object, ...]] = {"tool_choice": ("none",), "parallel_tool_calls": (True, False)}
# Under greedy decoding (temperature <= 0) these cannot change the token chosen: any value.
GREEDY_ONLY_FIELDS = frozenset({"seed", "top_k", "top_p", "min_p"})
# Another name for the same limit: the canonical name is max_tokens.
LIMIT_ALIASES = ("max_completion_tokens",)


def _is_one_of(value, values: tuple) -> bool:
    """``value`` is among ``values`` as JSON compares: true is not 1, and 0 is 0.0."""
    return any(
        value is expected
        if expected is None or isinstance(expected, bool)
        else not isinstance(value, bool) and value == expected
        for expected in values
    )


def _left_out(key: str, value, body: dict) -> bool:
    """Whether llama-server generates from ``body`` as if ``key`` were not in it."""
    if key in IGNORED_FIELDS or (key in DEFAULT_VALUES and _is_one_of(value, DEFAULT_VALUES[key])):
        return True
    if key in TOOL_ONLY_FIELDS and not body.get("tools") and _is_one_of(value, TOOL_ONLY_FIELDS[key]):
        return True
    return key in GREEDY_ONLY_FIELDS and _greedy(body)  # the temperature read only for the fields it decides


def _greedy(body: dict) -> bool:
    temperature = body.get("temperature")
    return isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature <= 0


def _sorted(mapping: dict) -> dict:
    return dict(sorted(mapping.items()))


def _number(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _content(content):
    """One text part is the plain string; anything else stays as sent."""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        part = content[0]
        if part.get("type") in ("text", "input_text") and set(part) == {"type", "text"}:
            return part["text"]
    return content


def _message(message) -> object:
    if not isinstance(message, dict):
        return message
    canonical = _sorted(message)
    if "content" in canonical:  # null content is read as "" (a null system message is an empty system turn)
        canonical["content"] = "" if canonical["content"] is None else _content(canonical["content"])
    if isinstance(canonical.get("tool_calls"), list):
        canonical["tool_calls"] = [_tool_call(call) for call in canonical["tool_calls"]]
    return canonical


def _tool_call(call) -> object:
    if isinstance(call, dict) and isinstance(call.get("function"), dict):
        return _sorted({**call, "function": _sorted(call["function"])})
    return call


def _tool(tool) -> object:
    """A tool's own keys in any order; its parameters exactly as sent (rendered in that order)."""
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        return _sorted({**tool, "function": _sorted(tool["function"])})
    return tool


def canonical_chat(body: dict) -> dict:
    """A chat request (or a converted Responses request) in canonical form."""
    canonical = {}
    for key, value in body.items():
        if _left_out(key, value, body):
            continue
        if key in LIMIT_ALIASES and "max_tokens" not in body:
            key = "max_tokens"
        if key == "messages" and isinstance(value, list):
            value = [_message(message) for message in value]
        elif key == "tools" and isinstance(value, list):
            value = [_tool(tool) for tool in value]
        canonical[key] = _number(value)
    canonical["stream"] = body.get("stream") is True
    return _sorted(canonical)


@overload
def canonical_request(path: str, body: dict) -> dict: ...
@overload
def canonical_request(path: str, body: object) -> object: ...
def canonical_request(path: str, body: object) -> object:
    """What llama-server generates from, for a request body sent to ``path``."""
    if not isinstance(body, dict):
        return body
    if path == RESPONSES_PATH:
        try:
            return canonical_chat(chat_twin(body))
        except (KeyError, TypeError, AttributeError):  # malformed input items: compare as sent
            return _as_sent(body)
    if path == CHAT_PATH:
        return canonical_chat(body)
    if path == MESSAGES_PATH:
        return _anthropic(body)
    return _as_sent(body)


def _anthropic(body: dict) -> dict:
    """A /v1/messages request: as sent, but for the equivalences proven there (the ignored fields,
    ``stream: false``, top-level numbers and key order, and key order inside a message)."""
    kept = _as_sent(body)
    if isinstance(kept.get("messages"), list):
        kept["messages"] = [_sorted(message) if isinstance(message, dict) else message for message in kept["messages"]]
    return kept


def _as_sent(body: dict) -> dict:
    kept = {key: _number(value) for key, value in body.items() if key not in IGNORED_FIELDS}
    kept["stream"] = body.get("stream") is True
    return _sorted(kept)
