"""Server-Sent Events as llama-server frames them, split and rebuilt without touching a byte.

A recorded stream body is a run of blocks, each ending in a blank line:

    event: response.output_text.delta\\n
    data: {"type":"response.output_text.delta",...}\\n
    \\n

Chat completions omit the ``event:`` line and end with ``data: [DONE]``.
"""

from __future__ import annotations

import json
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
