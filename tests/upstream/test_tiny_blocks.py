"""Record on a miss: a reply's memory is bounded by the cap whatever its framing (issue 55, item 4).

An upstream stream of empty SSE blocks (``"\\n\\n"``) cost about 60 bytes of memory per reply byte:
the spool held a bytes object, a list slot and an (offset, length) tuple for every 2-byte block,
and the cap and the budget counted the 2 bytes alone; 16 MiB of them peaked at 1.03 GB. A spool
now holds its blocks' bytes together and one offset a block, and each block is counted at its
bytes and ``BLOCK_BYTES`` more, against the cap and the budget alike. And a client following the
stream live got one write (one HTTP chunk) per block: it now gets every block come since its last
write in one.

The upstream is a test double of llama-server b11434 (tests/support/doubles/llama_server.py)
whose /v1/responses stream is nothing but empty blocks.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest
from aiohttp import web

from mockllama.app import create_app
from mockllama.server.background import BackgroundServer
from mockllama.upstream import spool as spool_module
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.proxy import RECORDER
from mockllama.upstream.record_on_miss import RecordOnMiss
from mockllama.upstream.spool import Spool
from support.doubles.llama_server import llama_server_with
from support.httpkit import call, chunks_on_the_wire
from support.recordings import SCENARIOS
from support.waiting import wait_for

REQUEST = json.dumps({**SCENARIOS["text-cut-8"].find("POST", "/v1/responses", True).request_json}).encode()
NEW = {"X-Mockllama-Scenario": "tiny"}  # a miss: no scenario has that name yet
CAP = 1024 * 1024
EMPTY_BLOCKS = 256 * 1024  # bytes of "\n\n": a quarter of the cap, in 131,072 blocks


def empty_blocks_double(size: int) -> web.Application:
    """A test double of llama-server whose /v1/responses stream is ``size`` bytes of empty blocks,
    written 64 KiB at a time."""

    async def replace(request, _):
        if request.path != "/v1/responses":
            return None
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        piece = b"\n\n" * (32 * 1024)
        for _ in range(size // len(piece)):
            await response.write(piece)
        await response.write_eof()
        return response

    return llama_server_with(replace)


@pytest.fixture
def proxy(tmp_path):
    running = []

    def start(upstream_url: str, **options) -> BackgroundServer:
        recording = RecordOnMiss(parse_upstream(upstream_url), tmp_path / "recorded", **options)
        running.append(BackgroundServer(create_app(dict(SCENARIOS), record_on_miss=recording)).start())
        return running[-1]

    yield start
    for server in reversed(running):
        server.stop()


def test_each_block_costs_its_offset_beyond_its_bytes():
    spool = Spool()
    spool.extend([b"\n\n"] * 10 + [b"data: 1\n\n"])
    assert spool_module.BLOCK_BYTES == 8  # one offset a block
    assert spool.cost == spool.size + 11 * spool_module.BLOCK_BYTES == 20 + 9 + 88
    spool.close()


@pytest.mark.parametrize("threshold", [10**9, 0], ids=["in-memory", "spooled"])
def test_a_spool_of_tiny_blocks_holds_no_more_memory_than_it_counts(threshold):
    """What a spool allocates is what it counts (its cost), within what arrays over-allocate to grow."""
    blocks = [b"\n\n"] * 1000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        spool = Spool(threshold)
        for _ in range(200):
            spool.extend(blocks)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(spool) == 200_000 and spool.size == 400_000
    assert held <= spool.cost * 1.25 + 16 * 1024, f"{held} bytes held for a cost of {spool.cost}"
    spool.close()


def test_a_stream_of_empty_blocks_under_the_cap_in_bytes_is_over_it_in_cost(proxy, tmp_path):
    """A quarter of the cap in payload, 131,072 blocks: each block's offset takes it past the cap."""
    with BackgroundServer(empty_blocks_double(EMPTY_BLOCKS)) as up:
        mock = proxy(up.url, max_reply_bytes=CAP)
        status, _, body = call(mock.url, "POST", "/fixed/v1/responses", REQUEST, NEW)
        error = json.loads(body)["error"]
        assert status == 502 and f"with more than {CAP} bytes" in error["message"], error
        assert wait_for(lambda: not mock.app[RECORDER].in_flight, 30)
        assert mock.app[RECORDER].budget.held == 0  # given back, offsets and all
    assert not (tmp_path / "recorded").exists() or list((tmp_path / "recorded").glob("*.yaml")) == []


def test_a_stream_of_empty_blocks_counts_each_blocks_offset_against_the_budget(proxy):
    """The budget all replies in flight share counts the same cost as the cap."""
    with BackgroundServer(empty_blocks_double(EMPTY_BLOCKS)) as up:
        mock = proxy(up.url, reply_budget=CAP)
        status, _, body = call(mock.url, "POST", "/fixed/v1/responses", REQUEST, NEW)
        error = json.loads(body)["error"]
        assert status == 503 and f"past the {CAP} bytes that all replies in flight" in error["message"], error
        assert wait_for(lambda: not mock.app[RECORDER].in_flight, 30)
        assert mock.app[RECORDER].budget.held == 0


def test_a_spool_hands_back_a_run_of_blocks_up_to_a_bound():
    for threshold in (10**9, 0):  # in memory, and spooled to a file
        spool = Spool(threshold)
        spool.extend([b"ab", b"cde", b"f", b"ghijkl"])
        assert spool.blocks(0, 4) == [b"ab", b"cde", b"f", b"ghijkl"] and spool.blocks(1, 3) == [b"cde", b"f"]
        assert spool.reach(0, 6) == 3  # ab + cde + f: 6 bytes
        assert spool.reach(0, 5) == 2
        assert spool.reach(3, 1) == 4  # one block, however big
        assert spool.reach(1, 10**9) == 4
        assert spool.reach(0, 10**9, most_blocks=2) == 2
        spool.close()


def test_a_client_following_a_stream_of_empty_blocks_is_written_to_a_run_at_a_time(proxy, monkeypatch):
    """131,072 upstream blocks were 131,072 writes to the client, one each; now a run of them, as
    they came, is two writes (the first block through aiohttp, the rest in one), each block still
    its own HTTP chunk."""
    writes = []
    real_write = web.StreamResponse.write

    async def counted(self, data):
        writes.append(len(data))
        return await real_write(self, data)

    monkeypatch.setattr(web.StreamResponse, "write", counted)
    with BackgroundServer(empty_blocks_double(EMPTY_BLOCKS)) as up:
        mock = proxy(up.url)
        chunks = chunks_on_the_wire(mock.url, "/buggy/v1/responses", REQUEST, NEW)
    assert chunks == [b"\n\n"] * (EMPTY_BLOCKS // 2)  # each upstream block its own chunk, as sent
    client_writes = [size for size in writes if size <= 2]  # the upstream double writes 64 KiB at a time
    assert len(client_writes) <= 256, f"{len(client_writes)} writes to the client for {len(chunks)} blocks"


def test_a_large_read_of_tiny_blocks_is_framed_a_slice_at_a_time(proxy, monkeypatch):
    """One 64 KiB read held 32,768 empty blocks, framed in one go (other clients waited meanwhile:
    16 MiB of them held a client up 3.4 s); now at most BLOCKS_AT_A_TIME between two turns of the
    event loop (measured with 16 MiB: a client's longest wait 0.42 s)."""
    kept = []
    real_extend = Spool.extend

    def counted(self, blocks):
        kept.append(len(blocks))
        return real_extend(self, blocks)

    monkeypatch.setattr(Spool, "extend", counted)
    with BackgroundServer(empty_blocks_double(EMPTY_BLOCKS)) as up:
        mock = proxy(up.url)
        status, _, body = call(mock.url, "POST", "/buggy/v1/responses", REQUEST, NEW)
    assert status == 200 and len(body) == EMPTY_BLOCKS
    assert sum(kept) >= EMPTY_BLOCKS // 2 and max(kept) <= spool_module.BLOCKS_AT_A_TIME, max(kept)
