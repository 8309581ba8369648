"""Reading a server's replies as its clients read them: JSON as RFC 8259 has it, a stream's events
up to ``[DONE]``, and the fields of a Responses reply and of a chat completion that the verdicts
look at.

What cannot be read so raises ``ProbeFailed``, which makes the probe's verdict ``unknown`` with
the reason: no verdict rests on a reply a client would read otherwise.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import NamedTuple

from mockllama.behaviours.variants.chat import body_arguments, stream_arguments
from mockllama.behaviours.variants.signals import ABSENT, TERMINAL_EVENTS
from mockllama.wire import sse
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from mockllama.wire.untrusted_http import ExchangeFailed

# The server's answer can't be judged: unreachable, an HTTP error, not JSON, a timeout.
ProbeFailed = ExchangeFailed


# --- JSON as RFC 8259 has it ---


class StrictJSONError(ValueError):
    """JSON that Python's parser takes but RFC 8259 does not: NaN, Infinity, a number out of
    range, a key twice in one object."""


def _no_constant(name: str):
    raise StrictJSONError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"the number {text[:40]} is out of range")
    return value


def _unique_keys(pairs: list) -> dict:
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise StrictJSONError(f"the key {key[:40]!r} appears twice in one object")
        seen.add(key)
    return dict(pairs)


def strict_json(text: str | bytes):
    """The value of ``text`` if RFC 8259 accepts it; StrictJSONError for what it rejects and
    Python would take (so that no verdict rests on a key one parser reads first and another
    last); another ValueError for what is not JSON at all, or nested too deeply to read."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


# --- A reply, as a client reads it ---


class StreamEvent(NamedTuple):
    name: str | None  # the SSE `event:` line
    data: dict  # the JSON object it carries; empty where its data is none
    text: str | None = None  # the data as sent, where it is no JSON object: `[DONE]`, text


def _rejected(path: str, err: StrictJSONError) -> ProbeFailed:
    return ProbeFailed(f"POST {path} answered JSON that RFC 8259 rejects ({err}), so no verdict can rest on it")


def _json(payload: bytes, path: str) -> dict:
    try:
        data = strict_json(payload)
    except StrictJSONError as err:
        raise _rejected(path, err) from None
    except ValueError:
        raise ProbeFailed(
            f"POST {path} answered something that is not JSON: {payload[:80].decode(errors='replace')!r}"
        ) from None
    if not isinstance(data, dict):
        raise ProbeFailed(f"POST {path} answered JSON that is not an object")
    return data


def _stream_events(payload: bytes, path: str) -> list[StreamEvent]:
    """The events of a stream as a client reads them (``sse.read_events``: CR, LF or CRLF, up to
    ``[DONE]``), each with its JSON object. Data that is no JSON object is kept only for an event
    named as a terminal event, which a client that switches on the event line takes as one."""
    try:
        read = sse.read_events(payload)
    except ValueError:  # UnicodeDecodeError
        raise ProbeFailed(f"POST {path} with stream=true answered events that are not UTF-8 JSON") from None
    events = []
    for event in read:
        try:
            data = strict_json(event.data)
        except StrictJSONError as err:
            raise _rejected(path, err) from None
        except ValueError:
            data = None  # not JSON at all: `[DONE]`, text
        if isinstance(data, dict):
            events.append(StreamEvent(event.name, data))
        elif event.name in TERMINAL_EVENTS:
            events.append(StreamEvent(event.name, {}, event.data))
    if not events:
        raise ProbeFailed(f"POST {path} with stream=true answered no JSON server-sent events")
    return events


def _function_calls(response: dict) -> list[dict]:
    return [item for item in response.get("output") or [] if item.get("type") == "function_call"]


def _response_object(response, path: str) -> dict:
    """A Responses object whose fields the verdict reads, or ProbeFailed saying what is wrong."""
    if not isinstance(response, dict):
        raise ProbeFailed(f"POST {path} answered a response that is not a JSON object")
    # A null status is a known variant (inspect_ai's), judged below; a missing one is no response object.
    if "status" not in response or not (response["status"] is None or isinstance(response["status"], str)):
        raise ProbeFailed(f'POST {path} answered a response without a "status" string')
    output = response.get("output") or []
    if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
        raise ProbeFailed(f'POST {path} answered an "output" that is not a list of objects')
    for key in ("usage", "incomplete_details"):
        if response.get(key) is not None and not isinstance(response[key], dict):
            raise ProbeFailed(f'POST {path} answered a "{key}" that is not an object')
    return response


def _choices(chunk: dict, path: str) -> list[dict]:
    choices = chunk.get("choices") or []
    if not isinstance(choices, list) or not all(isinstance(choice, dict) for choice in choices):
        raise ProbeFailed(f'POST {path} answered "choices" that are not a list of objects')
    return choices


def _reasoning_items(response: dict) -> list[dict]:
    return [item for item in response.get("output") or [] if item.get("type") == "reasoning"]


def _output_text(response: dict) -> str:
    """What the SDK's ``output_text`` gives: the text of the message items, reasoning left out."""
    return "".join(
        part.get("text") or ""
        for item in response.get("output") or []
        if item.get("type") == "message"
        for part in item.get("content") or []
        if part.get("type") == "output_text"
    )


def _parses(arguments) -> bool:
    try:
        json.loads(arguments)
        return True
    except (TypeError, ValueError):
        return False


def _finish_reason(chat: dict) -> str | None:
    choices = _choices(chat, CHAT_PATH) or [{}]
    return _reason(choices[0].get("finish_reason"))


def _stream_finish_reason(events: list[StreamEvent]) -> str | None:
    reasons = [c.get("finish_reason") for e in events for c in _choices(e.data, CHAT_PATH) if c.get("finish_reason")]
    return _reason(reasons[-1]) if reasons else None


@dataclass
class ChatSeen:
    """A chat completion as a client reads it: its ``finish_reason`` (a stream's last),
    ``usage.completion_tokens`` (ABSENT where no usage was sent: a stream sends it only when asked),
    and each tool call's arguments (a stream's deltas joined); with the request's ``max_tokens``."""

    finish_reason: str | None
    completion_tokens: object
    arguments: list
    limit: object  # the request's max_tokens
    stream: bool = False


def _usage(chunk: dict, path: str) -> object:
    usage = chunk.get("usage")
    if usage is None:
        return ABSENT
    if not isinstance(usage, dict):
        raise ProbeFailed(f'POST {path} answered a "usage" that is not an object')
    return usage.get("completion_tokens", ABSENT)


def seen_in_chat(payload: bytes, limit, stream: bool) -> ChatSeen:
    """What a probe judges in a chat completion to a request with this ``max_tokens``, a JSON body
    or a stream, or ProbeFailed."""
    if not stream:
        chat = _json(payload, CHAT_PATH)
        arguments = body_arguments(chat) if _choices(chat, CHAT_PATH) else []
        return ChatSeen(_finish_reason(chat), _usage(chat, CHAT_PATH), arguments, limit)
    events = _stream_events(payload, CHAT_PATH)
    counts = [_usage(event.data, CHAT_PATH) for event in events]
    tokens = next((count for count in reversed(counts) if count is not ABSENT), ABSENT)
    arguments = stream_arguments([event.data for event in events])
    return ChatSeen(_stream_finish_reason(events), tokens, arguments, limit, stream=True)


def _reason(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ProbeFailed(f"POST {CHAT_PATH} answered a finish_reason that is not a string: {value!r:.80}")
    return value


def _is_terminal(event: StreamEvent) -> bool:
    return event.data.get("type") in TERMINAL_EVENTS or event.name in TERMINAL_EVENTS


def _event_names(event: StreamEvent) -> set:
    """What a client may switch on: the JSON type, and the SSE event line where there is one."""
    return {event.data.get("type")} | ({event.name} if event.name is not None else set())


@dataclass
class Seen:
    """The reply a probe judges: the response (in a stream, the one its last event carries),
    and for a stream that last event, every terminal event it sent, and the arguments each
    arguments.done event carried."""

    response: dict
    terminal: StreamEvent | None = None
    arguments_done: dict = field(default_factory=dict)  # item_id -> arguments
    terminals: tuple[StreamEvent, ...] = ()  # the events named or typed as a terminal event, in order


def seen_in_stream(events: list[StreamEvent], path: str = RESPONSES_PATH) -> Seen:
    """What a probe judges in a Responses stream: the response its last event carries, that
    event, every terminal event, and the arguments of each arguments.done. A last event with no
    JSON (``event: response.completed`` with ``data: [DONE]``, where the SDK stops) carries no
    response: the one judged is then the last the stream sent."""
    terminal, where = events[-1], path + " (its last event)"
    carrying = [e for e in events if e.text is None and isinstance(e.data.get("response"), dict)]
    if terminal.text is not None and carrying:
        terminal_response, where = carrying[-1].data["response"], path + " (the last event with a response)"
    else:
        terminal_response = terminal.data.get("response")
    done = {
        e.data.get("item_id"): e.data.get("arguments")
        for e in events
        if e.data.get("type") == "response.function_call_arguments.done"
    }
    return Seen(_response_object(terminal_response, where), terminal, done, tuple(e for e in events if _is_terminal(e)))
