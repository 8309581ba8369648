"""The upstream's /props and /v1/models are read once for every flight: concurrent first misses
wait for one read (single flight), and a read that failed is tried again by the next miss."""

from __future__ import annotations

import asyncio

import pytest

from mockllama.recordings.record import RecordError, ServerInfo
from mockllama.upstream import server_info
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.server_info import UpstreamInfo
from mockllama.wire.errors import RequestError


class CountingProbe:
    """Stands in for ``record.probe``: counts the reads, each taking a moment, failing while told to."""

    def __init__(self, failures: int = 0):
        self.reads, self.failures = 0, failures

    async def __call__(self, url, timeout, headers) -> ServerInfo:
        self.reads += 1
        await asyncio.sleep(0.05)
        if self.reads <= self.failures:
            raise RecordError("GET /props answered HTTP 500")
        return ServerInfo({"model_alias": "m"}, {"data": [{"id": "m"}]})


def test_concurrent_first_misses_read_the_upstream_once(monkeypatch):
    probe = CountingProbe()
    monkeypatch.setattr(server_info, "probe", probe)
    info = UpstreamInfo(parse_upstream("http://127.0.0.1:9"))

    async def misses():
        return await asyncio.gather(*(info.read({}) for _ in range(8)))

    read = asyncio.run(misses())
    assert probe.reads == 1
    assert all(each is read[0] for each in read)


def test_a_failed_read_is_not_kept(monkeypatch):
    probe = CountingProbe(failures=1)
    monkeypatch.setattr(server_info, "probe", probe)
    info = UpstreamInfo(parse_upstream("http://127.0.0.1:9"))

    async def two_misses():
        with pytest.raises(RequestError, match="the upstream cannot be recorded from"):
            await info.read({})
        return await info.read({})

    assert asyncio.run(two_misses()).model == "m"
    assert probe.reads == 2
