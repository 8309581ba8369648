"""Forwarding a flight's requests to the upstream llama-server, and reading each reply into a spool
as it arrives: block by block for a stream, within the cap on one reply's size and the byte budget
that all replies in flight share.

A flight forwards the client's request, and for a ``/v1/responses`` request answered 200 its chat
twin (``twin_request``), the same conversion ``mockllama record`` uses.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re

import aiohttp
from yarl import URL

from mockllama.recordings.catalogue import PlannedRequest
from mockllama.recordings.chat_twin import chat_twin
from mockllama.upstream.cassette_writer import os_error
from mockllama.upstream.client import Upstream, forwarded_headers
from mockllama.upstream.flight import Exchange, Flight, Head, Sent
from mockllama.upstream.spool import BLOCK_BYTES, BLOCKS_AT_A_TIME, ReplyBudget, Spool
from mockllama.wire.errors import RequestError
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from mockllama.wire.terminal import printable

log = logging.getLogger("mockllama")

RECORDED_REQUEST_HEADERS = ("Content-Type",)  # matching never reads headers; nothing else is kept
# A blank line ends an SSE block; the spec lets a line end in CRLF, LF or CR alone.
BLANK_LINE = re.compile(rb"(?:\r\n|\r(?!\n)|\n){2}")


def block_end(pending: bytearray) -> int:
    """Where the first whole SSE block in ``pending`` ends, or -1. A CR at the very end may be the
    first half of a CRLF still on its way, so it ends nothing yet."""
    found = BLANK_LINE.search(pending)
    if found is None or (found.end() == len(pending) and pending.endswith(b"\r")):
        return -1
    return found.end()


def twin_request(sent: Sent, status: int) -> bytes | None:
    """The chat twin of a Responses request that was answered, as ``record`` derives it."""
    body = sent.body
    if sent.path != RESPONSES_PATH or status != 200 or not isinstance(body, dict):
        return None
    try:
        twin = chat_twin(body)
        try:
            text = PlannedRequest("POST", CHAT_PATH, json=twin).body_text()
            assert text is not None  # a JSON body has its text
            return text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate from the request: \u escapes are valid JSON
            return json.dumps(twin).encode("ascii")
    except (KeyError, TypeError, AttributeError, ValueError):
        log.warning("mockllama: no chat twin for %r: its input cannot be converted", sent.path)
        return None


class Forwarder:
    """Sends a flight's requests to the upstream and reads each reply into its spool, counting what
    it holds against the cap on one reply (``max_reply_bytes``) and the budget all flights share."""

    def __init__(self, upstream: Upstream, max_reply_bytes: int, budget: ReplyBudget):
        self.upstream = upstream
        self.max_reply_bytes = max_reply_bytes
        self.budget = budget

    async def exchange(
        self,
        session: aiohttp.ClientSession | None,
        flight: Flight,
        method: str,
        path: str,
        raw: bytes,
        spool: Spool,
    ) -> Exchange:
        """One upstream request for ``flight``, its reply read into ``spool``. The flight's own
        request (``spool`` is the flight's) is handed on as it arrives: the head first, then each
        SSE block, or each part of a body. Else it is the chat twin, mockllama's own JSON."""
        upstream = self.upstream
        own = spool is flight.spool
        headers = forwarded_headers(flight.sent.headers, upstream)
        if not own:
            headers["Content-Type"] = "application/json"
        query = f"?{flight.sent.query}" if own and flight.sent.query else ""
        target = URL(upstream.url + path + query, encoded=True)  # the client's query, not re-encoded
        assert session is not None  # open while the app runs (Recorder.session_context)
        async with session.request(
            method, target, data=raw or None, headers=headers, allow_redirects=False
        ) as response:
            if response.status < 200:
                raise self._interim(response)
            stream = response.content_type == "text/event-stream"
            if own:
                flight.head.set_result(
                    Head(response.status, response.reason or "", tuple(response.headers.items()), stream)
                )
            await self._read_into(spool, response, flight, framed=own and stream)
            if own:
                flight.finish()
            recorded_headers = {name: str(headers[name]) for name in RECORDED_REQUEST_HEADERS if name in headers}
            reply_headers = {
                str(name): response.headers.getall(name) for name in dict.fromkeys(response.headers.keys())
            }
        from vcr.request import Request as VcrRequest  # not at the top: see cassettes.read_cassette

        request = VcrRequest(method, upstream.url + path, raw or None, recorded_headers)
        return Exchange(request, response.status, response.reason or "", reply_headers, spool)

    def _interim(self, response: aiohttp.ClientResponse) -> RequestError:
        """A 1xx where the final reply was due: mockllama never asks to switch protocols (RFC 9110
        section 15.2), so it is no reply of llama-server's, and a replay of it would never end."""
        response.close()
        return RequestError(
            502,
            f"mockllama: the upstream llama-server at {self.upstream.url} answered "
            f"{response.method} {response.url.path} with {response.status} {printable(response.reason or '')}, "
            "an interim reply where the final one was due (no client asked it to switch protocols); "
            "mockllama closed the connection and nothing was recorded.",
        )

    def _too_large(self, response: aiohttp.ClientResponse) -> RequestError:
        """Stop reading a reply over the cap: it is never recorded, nor held any longer."""
        response.close()
        cap = self.max_reply_bytes
        return RequestError(
            502,
            f"mockllama: the upstream llama-server at {self.upstream.url} answered "
            f"{response.method} {response.url.path} with more than {cap} bytes; mockllama "
            "stopped reading it and nothing was recorded. Raise serve --max-reply-bytes if "
            "that is really wanted.",
        )

    def _over_budget(self, response: aiohttp.ClientResponse) -> RequestError:
        """Stop reading a reply the shared budget has no room for: nothing of it is recorded."""
        response.close()
        budget = self.budget
        return RequestError(
            503,
            f"mockllama: the upstream replies being recorded already hold {budget.held} bytes, and the "
            f"reply to {response.method} {response.url.path} would take them past the {budget.limit} "
            "bytes that all replies in flight may hold between them; mockllama stopped reading it and "
            "nothing was recorded. Retry once the recordings in progress are written.",
        )

    def _check_length(self, response: aiohttp.ClientResponse) -> None:
        """A Content-Length over the cap or the budget stops the reply before any of it is read."""
        length = response.content_length
        if length is not None:
            if length > self.max_reply_bytes:
                raise self._too_large(response)
            if not self.budget.fits(length):
                raise self._over_budget(response)

    def _hold(self, response: aiohttp.ClientResponse, flight: Flight, counted: int, cost: int) -> int:
        """``cost`` more bytes held for the reply, which has ``counted`` so far: within the cap, and
        taken from the budget for replies in flight. The new count."""
        counted += cost
        if counted > self.max_reply_bytes:
            raise self._too_large(response)
        if not self.budget.take(cost):
            raise self._over_budget(response)
        flight.held += cost
        return counted

    async def _read_into(self, spool: Spool, response: aiohttp.ClientResponse, flight: Flight, framed: bool) -> None:
        """The reply into ``spool``: each part as it comes, or (``framed``) each whole SSE block.
        What it holds is counted as it arrives, before it is framed, and each block's offset in the
        spool (``spool.BLOCK_BYTES``) too, so that tiny blocks cannot hold more than the cap."""
        self._check_length(response)
        counted, pending = 0, bytearray()
        async for chunk in response.content.iter_any():
            counted = self._hold(response, flight, counted, len(chunk))
            if not framed:
                counted = self._keep(spool, [chunk], flight, response, counted)
                continue
            pending += chunk
            blocks, end = [], block_end(pending)
            while end >= 0:  # whole SSE blocks, as they arrive
                blocks.append(bytes(pending[:end]))
                del pending[:end]
                end = block_end(pending)
                if len(blocks) == BLOCKS_AT_A_TIME and end >= 0:
                    # A large read of tiny blocks is framed a slice at a time, and other clients
                    # are served between slices (16 MiB of empty blocks held them up 3 s at once).
                    counted = self._keep(spool, blocks, flight, response, counted)
                    blocks = []
                    await asyncio.sleep(0)
            if blocks:
                counted = self._keep(spool, blocks, flight, response, counted)
        if pending:
            self._keep(spool, [bytes(pending)], flight, response, counted)

    def _keep(
        self, spool: Spool, blocks: list[bytes], flight: Flight, response: aiohttp.ClientResponse, counted: int
    ) -> int:
        """``blocks`` into ``spool``, their offsets counted: the new count."""
        counted = self._hold(response, flight, counted, BLOCK_BYTES * len(blocks))
        try:
            spool.extend(blocks)
        except OSError as err:  # a full or unwritable TMPDIR: this machine's fault, not the upstream's
            raise RequestError(
                500,
                f"mockllama: the upstream llama-server at {self.upstream.url} is answering "
                f"{flight.sent.method} {flight.sent.path}, but mockllama could not hold its reply in a "
                f"temporary file: {printable(os_error(err))}. The fault is on this machine: check that "
                "TMPDIR is writable and has space left. Nothing was recorded.",
            ) from None
        if spool is flight.spool:
            flight.more()
        return counted
