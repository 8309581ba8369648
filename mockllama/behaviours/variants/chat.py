"""A server's truncation signals on ``/v1/chat/completions``, declared once (``Chat``), and the
transform that writes them on a recorded chat completion.

llama-server's chat endpoint is honest: a reply cut at ``max_tokens`` says ``finish_reason:
"length"``, and usage counts every token generated. Other servers' chat endpoints are not all so,
and a client that falls back to chat, or trusts it, meets their signals there:

- ``finish_reason`` of a cut reply, apart for a reply whose tool calls parsed (every call's
  ``arguments`` is valid JSON, or for some servers any call the recording holds) and one without:
  a server may relabel the first ``"tool_calls"``, and may do so only for some ``tool_choice``
  values of the request;
- ``usage.completion_tokens`` (and ``total_tokens`` with it) of a cut reply, for a server that
  under-counts.

A reply is cut when its own recorded ``finish_reason`` is ``"length"``: on this endpoint the
recording says so itself. A reply that finished, an error and any other route are sent as
recorded. ``None`` in a declaration keeps the recording's value: an honest server declares
``HONEST``. Everything else (text, arguments, ids, timings, the framing of every chunk that does
not change) stays the recording's bytes.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from mockllama.behaviours.reply import Reply, recorded_reply
from mockllama.recordings.cassettes import Interaction, chat_finish_reason
from mockllama.wire import sse
from mockllama.wire.routes import CHAT_PATH

CUT = "length"  # what llama-server's chat endpoint says of a reply cut at max_tokens
NOT_SENT = "(none sent)"  # a request's tool_choice when it sent none, in ``call_tool_choices``


@dataclass(frozen=True)
class ChatEnding:
    """What a server's chat reply says when generation was cut at ``max_tokens``; ``None``: as recorded."""

    finish_reason: str | None = None  # a cut reply without a parsed tool call
    call_finish_reason: str | None = None  # a cut reply whose tool calls all parsed
    # The request's tool_choice values (NOT_SENT when absent) under which call_finish_reason is
    # written; None: whatever the request sent.
    call_tool_choices: tuple[str, ...] | None = None
    # True: call_finish_reason goes on any cut reply that holds a tool call, its arguments parsed or
    # not (a server that takes the backend's partial call for a call).
    any_call: bool = False
    completion_tokens: int = 0  # added to a cut reply's usage.completion_tokens and total_tokens

    @property
    def honest(self) -> bool:
        return self == HONEST

    def finish_reason_for(self, arguments: list, tool_choice: str) -> str | None:
        """The finish_reason to write on a cut reply holding calls with these ``arguments``, or None
        to keep the recorded one."""
        called = bool(arguments) if self.any_call else _calls_parse(arguments)
        if called and self.call_finish_reason is not None:
            if self.call_tool_choices is None or tool_choice in self.call_tool_choices:
                return self.call_finish_reason
        return self.finish_reason


HONEST = ChatEnding()


@dataclass(frozen=True)
class Chat:
    """A server's chat-side signals: in the non-streamed reply and in a stream's last chunks."""

    body: ChatEnding
    stream: ChatEnding
    # Where it was read, for the variants page (the module's docstring cites file and line); None:
    # not read yet, so kept as llama-server sends it, and the page says so.
    source: str | None

    @property
    def honest(self) -> bool:
        return self.body.honest and self.stream.honest

    @property
    def read(self) -> bool:
        return self.source is not None


UNREAD_CHAT = Chat(HONEST, HONEST, source=None)


def _reason(ending: ChatEnding, call: bool) -> str:
    reason = ending.call_finish_reason if call else ending.finish_reason
    if reason is None:
        return "`length`"
    if call and ending.any_call:
        return f"`{reason}` (any call, parsed or not)"
    if call and ending.call_tool_choices is not None:
        choices = " or ".join(f"`{c}`" if c != NOT_SENT else "none sent" for c in ending.call_tool_choices)
        return f"`{reason}` (tool_choice {choices}), else `length`"
    return f"`{reason}`"


def markdown_row(name: str, server: str, chat: Chat) -> str:
    """One server's row in the variants page's chat table."""
    if not chat.read:
        return f"| `/{name}/v1` | {server} | as recorded: not read yet | | | | |"
    body, stream = chat.body, chat.stream
    tokens = "as recorded" if not body.completion_tokens else f"`max_tokens {body.completion_tokens:+d}`"
    return (
        f"| `/{name}/v1` | {server} | {_reason(body, False)} | {_reason(body, True)} | "
        f"{_reason(stream, False)} / {_reason(stream, True)} | {tokens} | {chat.source} |"
    )


def rewrites(interaction: Interaction) -> bool:
    """Only a successful chat completion cut at its limit carries a chat-side signal."""
    return interaction.path == CHAT_PATH and interaction.status == 200 and chat_finish_reason(interaction) == CUT


def tool_choice(request) -> str:
    """A chat request's ``tool_choice`` as a declaration names it: NOT_SENT when absent."""
    choice = request.get("tool_choice", NOT_SENT) if isinstance(request, dict) else NOT_SENT
    # A named choice ({"type": "function", ...}) is none of the string values a declaration names.
    return choice if isinstance(choice, str) else json.dumps(choice, sort_keys=True)


def _parses(arguments) -> bool:
    try:
        json.loads(arguments)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _calls_parse(arguments: list) -> bool:
    return bool(arguments) and all(_parses(text) for text in arguments)


def body_arguments(body: dict) -> list:
    """Each tool call's arguments in a chat completion, as its message holds them."""
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = (first.get("message") if isinstance(first, dict) else None) or {}
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [(call.get("function") or {}).get("arguments") for call in calls if isinstance(call, dict)]


def stream_arguments(payloads: list) -> list:
    """Each streamed tool call's arguments, its deltas joined by the call's index."""
    joined: dict[object, str] = {}
    for payload in payloads:
        choices = payload.get("choices") if isinstance(payload, dict) else None
        for choice in choices if isinstance(choices, list) else []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            for call in (delta or {}).get("tool_calls") or []:
                if isinstance(call, dict):
                    text = (call.get("function") or {}).get("arguments")
                    index = call.get("index")
                    joined[index] = joined.get(index, "") + (text if isinstance(text, str) else "")
    return list(joined.values())


def _write_usage(usage, ending: ChatEnding) -> None:
    if not isinstance(usage, dict) or not ending.completion_tokens:
        return
    for key in ("completion_tokens", "total_tokens"):
        if isinstance(usage.get(key), int):
            usage[key] = max(0, usage[key] + ending.completion_tokens)


def write_body(body: dict, ending: ChatEnding, tool_choice: str) -> dict:
    """A cut chat completion saying what ``ending`` says; every other field as it was."""
    written = copy.deepcopy(body)
    reason = ending.finish_reason_for(body_arguments(body), tool_choice)
    for choice in written.get("choices") or []:
        if reason is not None and isinstance(choice, dict) and choice.get("finish_reason") == CUT:
            choice["finish_reason"] = reason
    _write_usage(written.get("usage"), ending)
    return written


def write_stream(events: tuple[sse.Event, ...], ending: ChatEnding, tool_choice: str) -> tuple[sse.Event, ...]:
    """The recorded stream with ``ending``'s signals on the chunk that says ``"length"`` and on any
    chunk with usage; every other chunk keeps its recorded bytes."""
    payloads = [event.json() for event in events]
    reason = ending.finish_reason_for(stream_arguments(payloads), tool_choice)
    written = []
    for event, payload in zip(events, payloads):
        if isinstance(payload, dict):
            changed = copy.deepcopy(payload)
            for choice in changed.get("choices") or []:
                if reason is not None and isinstance(choice, dict) and choice.get("finish_reason") == CUT:
                    choice["finish_reason"] = reason
            _write_usage(changed.get("usage"), ending)
            event = event if changed == payload else sse.make_event(event.name, changed)
        written.append(event)
    return tuple(written)


def chat_reply(interaction: Interaction, chat: Chat) -> Reply:
    """The recorded chat completion with ``chat``'s signals, where it was cut and they differ from llama-server's."""
    if not rewrites(interaction) or chat.honest:
        return recorded_reply(interaction)
    choice = tool_choice(interaction.request_json)
    if interaction.is_event_stream:
        events = write_stream(tuple(interaction.events), chat.stream, choice)
        body = b"".join(event.raw for event in events)
        return Reply(interaction.status, interaction.reason, interaction.headers, body, events)
    written = write_body(interaction.body_json, chat.body, choice)
    body = interaction.body if written == interaction.body_json else sse.dump_json(written).encode("utf-8")
    return Reply(interaction.status, interaction.reason, interaction.headers, body, None)
