"""Time to first byte through ``serve --upstream``, against a direct connection to llama-server.

    python -m benchmarks.upstream --llama-server http://127.0.0.1:8080 [--rounds 5]

Each round sends the same streamed Responses request straight to llama-server, then through a
mockllama recording every request (``--record-mode all``, so each one is a miss that reaches
the upstream), in turn, and times the first byte of the body and the whole reply. The next
request waits until the recording (and its chat twin) is done, so the twin never overlaps a
measurement. Medians are printed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from mockllama.server.app import create_replay_app
from mockllama.server.background import BackgroundServer
from mockllama.upstream import proxy
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.record_mode import RecordMode
from mockllama.upstream.record_on_miss import RecordOnMiss

REQUEST = {
    "model": "x",
    "input": "Count from 1 to 200, separated by spaces.",
    "max_output_tokens": 64,
    "temperature": 0,
    "stream": True,
}


@dataclass(frozen=True)
class Timing:
    first_byte: float  # seconds from sending the request to the first byte of the body
    total: float  # seconds to the end of the reply


@dataclass(frozen=True)
class Result:
    direct: list[Timing]
    proxied: list[Timing]

    @staticmethod
    def _median(timings: list[Timing], field: str) -> float:
        return statistics.median(getattr(t, field) for t in timings)

    def medians(self) -> dict[str, float]:
        return {
            f"{who}_{field}": self._median(timings, field) * 1000
            for who, timings in (("direct", self.direct), ("proxied", self.proxied))
            for field in ("first_byte", "total")
        }

    def lines(self) -> list[str]:
        m = self.medians()
        return [
            "| path | first byte, median ms | whole stream, median ms | rounds |",
            "| --- | --- | --- | --- |",
            f"| direct to llama-server | {m['direct_first_byte']:.1f} | {m['direct_total']:.1f} | {len(self.direct)} |",
            f"| through serve --upstream (a miss) | {m['proxied_first_byte']:.1f} | {m['proxied_total']:.1f} "
            f"| {len(self.proxied)} |",
            f"first byte through the proxy: +{m['proxied_first_byte'] - m['direct_first_byte']:.1f} ms; "
            f"the first byte comes at {100 * m['proxied_first_byte'] / m['proxied_total']:.0f}% of the stream's time",
        ]


def time_request(base_url: str, path: str, body: bytes) -> Timing:
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    try:
        started = time.perf_counter()
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read1(1)
        first = time.perf_counter() - started
        response.read()
        return Timing(first, time.perf_counter() - started)
    finally:
        connection.close()


def _settle(app, seconds: float = 300) -> None:
    """Wait until no recording is in the air, so its twin does not overlap the next request."""
    deadline = time.monotonic() + seconds
    while app[proxy.RECORDER].in_flight and time.monotonic() < deadline:
        time.sleep(0.01)


def measure(llama_server: str, rounds: int = 5, request: dict | None = None) -> Result:
    body = json.dumps(request or REQUEST).encode()
    direct, proxied = [], []
    with tempfile.TemporaryDirectory() as record_to:
        options = RecordOnMiss(parse_upstream(llama_server), Path(record_to), RecordMode.ALL)
        app = create_replay_app({}, route=lambda app: proxy.install(app, options))
        with BackgroundServer(app) as through:
            time_request(through.url, "/buggy/v1/responses", body)  # warm-up: reads /props once, loads caches
            _settle(app)
            for _ in range(rounds):
                direct.append(time_request(llama_server, "/v1/responses", body))
                proxied.append(time_request(through.url, "/buggy/v1/responses", body))
                _settle(app)
    return Result(direct, proxied)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.upstream", description=__doc__.split("\n\n")[0])
    parser.add_argument("--llama-server", required=True, metavar="URL", help="a live llama-server's base URL")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    for line in measure(args.llama_server.rstrip("/"), args.rounds).lines():
        print(line)


if __name__ == "__main__":
    main()
