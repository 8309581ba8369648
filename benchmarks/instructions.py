"""Instructions per request, counted by valgrind's callgrind: ``python -m benchmarks --instructions``.

On a shared machine req/s swings from one run to the next by more than a small change to the hot
path moves it. callgrind counts the instructions the server executes instead, which do not move with
whatever else the machine is doing; they do move a little from run to run (the event loop wakes a
varying number of times), so a change of a percent or two needs several runs. Each contender (the
floor, aiohttp's low-level server, and mockllama in each behaviour) runs under callgrind with
counting off while it starts and warms up; then it counts over ``requests`` non-streamed
``text-cut-8`` requests on one kept-alive connection. The ratio to the floor is the floor's count
over the contender's: what the req/s ratio would be on a core of its own. Python's hash seed is
fixed so dict layouts repeat.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import CHECKOUT, FLOOR, TEXT, Contender, contenders, free_port, request_body
from mockllama.wire.routes import RESPONSES_PATH

WARM_UP = 200


def _send(port: int, body: bytes, count: int, deadline: float) -> None:
    while True:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            connection.request("POST", RESPONSES_PATH, body, {"Content-Type": "application/json"})
            connection.getresponse().read()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing answered on port {port} under valgrind") from None
            time.sleep(0.5)
    for _ in range(count):
        connection.request("POST", RESPONSES_PATH, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status} from the contender on port {port}")
    connection.close()


def count(contender: Contender, body: bytes, requests: int) -> int:
    """Instructions per request of ``contender``'s server."""
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "callgrind.out"
        server = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", *contender.command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            cwd=CHECKOUT,
        )
        try:
            _send(contender.port, body, WARM_UP, time.monotonic() + 600)
            subprocess.run(["callgrind_control", "-i", "on", str(server.pid)], check=True, capture_output=True)
            _send(contender.port, body, requests, time.monotonic() + 60)
            subprocess.run(["callgrind_control", "-i", "off", str(server.pid)], check=True, capture_output=True)
        finally:
            server.send_signal(signal.SIGINT)  # a clean exit writes the counts
            server.wait(timeout=120)
        totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
        return int(totals[0].split()[1]) // requests


def run_instructions(requests: int = 2000) -> str:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("python -m benchmarks --instructions needs valgrind: apt-get install valgrind")
    body = request_body(*TEXT)
    counts = {}
    for contender in contenders(free_port):
        counts[contender.name] = count(contender, body, requests)
        print(f"counted {contender.name}", flush=True)
    floor = counts[FLOOR]
    lines = ["| contender | instructions per request | vs floor |", "| --- | --- | --- |"]
    lines += [f"| {name} | {each:,} | {floor / each:.2f}x |" for name, each in counts.items()]
    return "\n".join(lines)
