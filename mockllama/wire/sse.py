"""Server-Sent Events as llama-server frames them, split and rebuilt without touching a byte.

A recorded stream body is a run of blocks, each ending in a blank line:

    event: response.output_text.delta\\n
    data: {"type":"response.output_text.delta",...}\\n
    \\n

Chat completions omit the ``event:`` line and end with ``data: [DONE]``.
"""

from __future__ import annotations

import json
from typing import NamedTuple

BLOCK_END = b"\n\n"


class Event(NamedTuple):
    """One SSE block: its ``event:`` name (or None), its ``data:`` text, and its exact bytes.
    A named tuple, not a frozen dataclass: a first start at 10,000 recordings makes 250,000 of
    them to check the streams, and a frozen dataclass is five times slower to make."""

    name: str | None
    data: str
    raw: bytes

    def json(self):
        """The data as JSON, or None for non-JSON data such as ``[DONE]``."""
        try:
            return json.loads(self.data)
        except ValueError:
            return None


def split_blocks(body: bytes) -> list[bytes]:
    """Cut a stream body into blocks; joining them gives back ``body`` exactly."""
    *ended, rest = body.split(BLOCK_END)
    blocks = [block + BLOCK_END for block in ended]
    return [*blocks, rest] if rest else blocks


def parse_block(raw: bytes) -> Event:
    lines = raw.decode("utf-8").split("\n")
    if len(lines) == 4 and lines[0].startswith("event: ") and lines[1].startswith("data: ") and not lines[2] \
            and not lines[3]:  # llama-server's own framing, read as the loop below reads it
        return Event(lines[0][len("event: "):].strip(), lines[1][len("data: "):], raw)
    name = None
    data_lines = []
    for line in lines:
        if line.startswith("data:"):
            data_lines.append(line[len("data:") :].removeprefix(" "))
        elif line.startswith("event:"):
            name = line[len("event:") :].strip()
    return Event(name, "\n".join(data_lines), raw)


def parse_stream(body: bytes) -> list[Event]:
    return [parse_block(block) for block in split_blocks(body)]


def is_event_stream(body: bytes) -> bool:
    return body.startswith((b"event:", b"data:"))


def dump_json(payload) -> str:
    """JSON the way llama-server writes it: compact, UTF-8 kept as is."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)


def make_event(name: str | None, payload) -> Event:
    """A new block in llama-server's framing (``event:`` line, ``data:`` line, blank line)."""
    data = dump_json(payload)
    head = f"event: {name}\n" if name is not None else ""
    return Event(name=name, data=data, raw=f"{head}data: {data}\n\n".encode("utf-8"))
