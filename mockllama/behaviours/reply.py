"""A reply as the writer sends it, and the reply that is the recording as it is."""

from __future__ import annotations

from dataclasses import dataclass

from mockllama.recordings.cassettes import Interaction
from mockllama.wire import sse


@dataclass(frozen=True, eq=False)  # compared by identity: each is built once (replay.reply_for)
class Reply:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]  # as recorded; the writer drops the hop-by-hop ones
    body: bytes  # the whole body, also for streams (what buggy sends, byte for byte)
    events: tuple[sse.Event, ...] | None  # for a stream: the blocks to write one at a time
    decided_by: str | None = None


def recorded_reply(interaction: Interaction) -> Reply:
    events = tuple(interaction.events) if interaction.is_event_stream else None
    return Reply(interaction.status, interaction.reason, interaction.headers, interaction.body, events)
