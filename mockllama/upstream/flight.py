"""A flight: one upstream exchange, shared by the clients that miss with the same request at the
same time (single-flight), and the reply it hands each of them as it arrives.

``Sent`` is the client's request as forwarded and recorded, and its ``key``: requests the matcher
takes for the same one share a flight. ``Flight`` holds the upstream's reply in a ``Spool`` and
wakes every client that follows it; ``Exchange`` is one upstream request and its reply, as the
recording will hold it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from mockllama.matching.pipeline import canonical_key
from mockllama.upstream.spool import Spool
from mockllama.wire.errors import RequestError

# At most this many bytes of a reply in one run of blocks to a following client: a client far
# behind a large spooled reply reads it back a piece at a time, never whole.
FOLLOW_BYTES = 256 * 1024


@dataclass(frozen=True)
class Sent:
    """The client's request, as forwarded and as recorded: the body is the exact bytes sent."""

    method: str
    path: str  # without the behaviour prefix
    query: str  # raw, as the client wrote it
    raw: bytes
    headers: tuple[tuple[str, str], ...]
    scenario_header: str | None

    @property
    def body(self):
        try:
            return json.loads(self.raw) if self.raw else None
        except ValueError:
            return None

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    def key(self) -> tuple:
        """Requests that the matcher takes for the same one share a flight."""
        body = self.body
        same = canonical_key(self.path, body) if body is not None else self.raw
        return self.method, self.path, self.scenario_header, same


@dataclass(frozen=True)
class Head:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    stream: bool


@dataclass(frozen=True)
class Exchange:
    """One upstream request and its reply, the body in a spool until the recording is written."""

    request: object  # vcr.request.Request, as recorded
    status: int
    reason: str
    headers: dict[str, list[str]]
    spool: Spool

    def pair(self) -> tuple:
        """The (request, response) pair vcrpy writes, with the body read back whole."""
        reply = {"status": {"code": self.status, "message": self.reason}, "headers": self.headers}
        return self.request, {**reply, "body": {"string": self.spool.read()}}


@dataclass(eq=False)
class Flight:
    name: str  # the scenario it records
    sent: Sent
    spool: Spool  # the upstream's reply to the client's request, as it arrives
    head: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    recorded: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    finished: bool = False  # the upstream's reply to the client's request is complete
    writing: bool = False  # the recording is being written (on disk, no longer upstream)
    held: int = 0  # bytes of the reply budget this flight holds
    error: RequestError | None = None
    clients: int = 0  # handlers that may still read the spool
    landed: bool = False  # the flight's task is over
    _more: asyncio.Event = field(default_factory=asyncio.Event)

    def more(self) -> None:
        """New blocks are in the spool."""
        self._wake()

    def finish(self) -> None:
        self.finished = True
        self._wake()

    def fail(self, error: RequestError) -> None:
        self.error = error
        for future in (self.head, self.recorded):
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: a flight nobody waits on must not log a warning
        self._wake()

    def _wake(self) -> None:
        self._more.set()
        self._more = asyncio.Event()

    async def follow(self):
        """The reply's blocks as they arrive, in runs: every block come since the last run (up to
        ``FOLLOW_BYTES``, and ``spool.BLOCKS_AT_A_TIME`` blocks), so that a client is written to once
        a wake, not once an upstream block. Raises the flight's error if it breaks off."""
        index = 0
        while True:
            if index < len(self.spool):
                start, index = index, self.spool.reach(index, FOLLOW_BYTES)
                yield self.spool.blocks(start, index)
                continue
            if self.finished:
                return
            if self.error is not None:
                raise self.error
            await self._more.wait()

    async def complete(self) -> None:
        """Until the whole reply is in; raises the flight's error if it breaks off."""
        while not self.finished:
            if self.error is not None:
                raise self.error
            await self._more.wait()

    def leave(self) -> None:
        """A handler is done with the flight (``Recorder.flight_for`` counted it in)."""
        self.clients -= 1
        self._drop_spool()

    def land(self) -> None:
        """The flight's task is over: the spool goes once no handler may read it."""
        self.landed = True
        self._drop_spool()

    def _drop_spool(self) -> None:
        if self.landed and self.clients <= 0:
            self.spool.close()
