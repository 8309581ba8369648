"""Server-Sent Events: as llama-server frames them, split and rebuilt without touching a byte
(the replay path), and as a client reads them (``read_events``: what judges a stream).

A recorded stream body is a run of blocks, each ending in a blank line:

    event: response.output_text.delta\\n
    data: {"type":"response.output_text.delta",...}\\n
    \\n

Chat completions omit the ``event:`` line and end with ``data: [DONE]``.

``split_blocks`` and ``parse_stream`` know only that LF framing: they cut a recording into the
blocks the server writes one at a time, and keep every byte. A client is not so narrow, so
whatever judges what a server sent reads it with ``read_events`` instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, AnyStr, NamedTuple

BLOCK_END = b"\n\n"


class Event(NamedTuple):
    """One SSE block: its ``event:`` name (or None), its ``data:`` text, and its exact bytes.
    A named tuple, not a frozen dataclass: a first start with many recordings makes hundreds of
    thousands of them to check the streams, and a frozen dataclass is slower to make."""

    name: str | None
    data: str
    raw: bytes

    def json(self):
        """The data as JSON, or None for non-JSON data such as ``[DONE]``."""
        return json_or_none(self.data)


# json.loads checks its argument, skips white space around the value and calls the C scanner
# through two Python calls; data as llama-server writes it (no white space) goes to the scanner at once.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # typeshed leaves out the scanner JSONDecoder.__init__ sets


def json_or_none(data: str):
    """``json.loads(data)``, or None where that fails: text that is not JSON, or JSON nested too
    deeply for Python to build (a RecursionError, which would stop whatever read a hostile cassette)."""
    try:
        value, end = _SCAN(data, 0)
        if end == len(data):
            return value
    except (StopIteration, ValueError, RecursionError):
        pass  # json.loads says what it is: white space around a value, or not JSON
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def split_blocks(body: AnyStr) -> list[AnyStr]:
    """Cut a stream body (its bytes, or its decoded text) into blocks; joining them gives back
    ``body`` exactly."""
    end: AnyStr = BLOCK_END if isinstance(body, bytes) else "\n\n"
    parts = body.split(end)
    blocks = [part + end for part in parts[:-1]]
    return blocks + parts[-1:] if parts[-1] else blocks


def _name_and_data(lines: list[str]) -> tuple[str | None, str]:
    """A block's ``event:`` name and ``data:`` text, from its lines."""
    if (
        len(lines) == 4
        and lines[0].startswith("event: ")
        and lines[1].startswith("data: ")
        and not lines[2]
        and not lines[3]
    ):  # llama-server's own framing, read as the loop below reads it
        return lines[0][len("event: ") :].strip(), lines[1][len("data: ") :]
    name = None
    data_lines = []
    for line in lines:
        if line.startswith("data:"):
            data_lines.append(line[len("data:") :].removeprefix(" "))
        elif line.startswith("event:"):
            name = line[len("event:") :].strip()
    return name, "\n".join(data_lines)


def parse_block(raw: bytes) -> Event:
    return Event(*_name_and_data(raw.decode("utf-8").split("\n")), raw)


def parse_stream(body: bytes) -> list[Event]:
    return [parse_block(block) for block in split_blocks(body)]


def payloads(text: str) -> list:
    """Each block's data as JSON (None where it is not), as ``parse_stream``'s events' ``json()``
    give them, from the body's decoded text, without making the events: what a check of every
    stream at a first start needs (a third less time than through the events)."""
    return [json_or_none(_name_and_data(block.split("\n"))[1]) for block in split_blocks(text)]


def is_event_stream(body: bytes) -> bool:
    return body.startswith((b"event:", b"data:"))


def dump_json(payload) -> str:
    """JSON the way llama-server writes it: compact, UTF-8 kept as is."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)


def make_event(name: str | None, payload) -> Event:
    """A new block in llama-server's framing (``event:`` line, ``data:`` line, blank line)."""
    data = dump_json(payload)
    head = f"event: {name}\n" if name is not None else ""
    return Event(name=name, data=data, raw=f"{head}data: {data}\n\n".encode())


# The SSE specification's line ends: CRLF, CR or LF, in any mix.
_LINE = re.compile(rb"([^\r\n]*)(\r\n|\r|\n)")
DONE = "[DONE]"


def read_events(body: bytes) -> list[Event]:
    """The events a client reads from a stream body, as the SSE specification and the openai
    SDK's decoder (``openai/_streaming.py``) read them, ``raw`` the bytes each was read from.

    A line ends at CRLF, CR or LF. A line starting with a colon is a comment; otherwise the
    field name runs to the first colon (the whole line when there is none) and one space after
    the colon is dropped. ``event`` names the event (the last such line; an empty one, none),
    ``data`` lines are joined with LF, ``id`` and ``retry`` are kept as the SDK keeps them, any
    other field is ignored. A blank line ends an event once any of those fields has been seen
    (the SDK's rule: an ``event:`` line without data makes an event too; the last non-empty
    ``id`` is never forgotten). An event cut off before its blank line is never read. The stream ends at the first
    event whose data starts with ``[DONE]``, as the SDK's stream ends: that event is the last one
    read, with its ``event:`` line, so that a terminal event is counted by its name whatever its
    data. Not UTF-8: UnicodeDecodeError, as in the SDK.
    """
    events: list[Event] = []
    name: str | None = None
    data: list[str] = []
    last_id: str | None = None
    retry = False
    start = 0
    for line in _LINE.finditer(body):
        text = line.group(1).decode("utf-8")
        if not text:
            if name is None and not data and not last_id and not retry:
                continue
            event = Event(name, "\n".join(data), body[start : line.end()])
            events.append(event)
            if event.data.startswith(DONE):
                break
            name, data, retry, start = None, [], False, line.end()
            continue
        if text.startswith(":"):
            continue
        field, _, value = text.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value or None
        elif field == "data":
            data.append(value)
        elif field == "id" and "\0" not in value:
            last_id = value
        elif field == "retry":
            retry = retry or _is_int(value)
    return events


def _is_int(value: str) -> bool:
    try:
        int(value)  # what the SDK takes as a retry
    except ValueError:
        return False
    return True
