"""The upstream's ``/props`` and ``/v1/models``, read the first time a flight needs them: the
recordings' provenance, as ``record`` writes it, and proof that the upstream is llama-server."""

from __future__ import annotations

import asyncio

from mockllama.recordings.record import RecordError, ServerInfo, probe
from mockllama.upstream.client import Upstream, forwarded_headers
from mockllama.wire.errors import RequestError


class UpstreamInfo:
    """What ``record`` reads of the upstream before it records, read once for every flight."""

    def __init__(self, upstream: Upstream):
        self.upstream = upstream
        self._info: ServerInfo | None = None
        # Single flight: concurrent first misses wait for one read rather than each probing the
        # upstream. A read that fails is not kept, so the next miss reads again.
        self._reading = asyncio.Lock()

    async def read(self, client_headers) -> ServerInfo:
        """The upstream's /props and /v1/models, read once: provenance, and proof it is llama-server."""
        if self._info is not None:
            return self._info
        async with self._reading:
            if self._info is not None:  # read by the miss this one waited for
                return self._info
            upstream = self.upstream
            headers = dict(forwarded_headers(client_headers, upstream))
            try:
                self._info = await probe(upstream.url, upstream.timeout, headers)
            except RecordError as err:
                raise RequestError(
                    502, f"mockllama: the upstream cannot be recorded from: {err}; nothing was recorded."
                ) from None
        return self._info
