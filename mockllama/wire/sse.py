"""Server-Sent Events as llama-server frames them, split and rebuilt without touching a byte.

A recorded stream body is a run of blocks, each ending in a blank line:

    event: response.output_text.delta\\n
    data: {"type":"response.output_text.delta",...}\\n
    \\n

Chat completions omit the ``event:`` line and end with ``data: [DONE]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

BLOCK_END = b"\n\n"


@dataclass(frozen=True)
class Event:
    """One SSE block: its ``event:`` name (or None), its ``data:`` text, and its exact bytes."""

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
    blocks = []
    start = 0
    while start < len(body):
        end = body.find(BLOCK_END, start)
        if end < 0:
            blocks.append(body[start:])
            break
        blocks.append(body[start : end + len(BLOCK_END)])
        start = end + len(BLOCK_END)
    return blocks


def parse_block(raw: bytes) -> Event:
    name = None
    data_lines = []
    for line in raw.decode("utf-8").split("\n"):
        if line.startswith("event:"):
            name = line[len("event:") :].strip()
        elif line.startswith("data:"):
            data_lines.append(line[len("data:") :].removeprefix(" "))
    return Event(name=name, data="\n".join(data_lines), raw=raw)


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
