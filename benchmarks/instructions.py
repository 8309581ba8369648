"""Instructions per request, counted by valgrind's callgrind: ``python -m benchmarks --instructions``.

On a shared machine req/s swings from one run to the next by more than a small change to the hot
path moves it. callgrind counts the instructions the server executes instead, which do not move with
whatever else the machine is doing; they do move a little from run to run (the event loop wakes a
varying number of times), so a change of a percent or two needs several runs. Each contender (the
floor, aiohttp's low-level server, and mockllama in each behaviour) runs under callgrind with
counting off while it starts, warms up and goes idle (mockllama prepares its 404's nearest
search a second after its start); then it counts over ``requests`` non-streamed
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
from collections.abc import Callable
from pathlib import Path

from benchmarks.harness import (
    CHECKOUT,
    FLOOR,
    TEXT,
    Contender,
    contenders,
    cpu_seconds,
    free_port,
    on_cpu,
    request_body,
)
from mockllama.wire.routes import RESPONSES_PATH

WARM_UP = 200
# CPU seconds in a second below which a server under valgrind is idle (the floor's: 0.00).
IDLE_CPU_SECONDS = 0.02


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


def _wait_idle(pid: int, deadline: float) -> None:
    """Until the server uses next to no CPU for a second: what it does once after its start (mockllama
    prepares its 404's nearest search a second after it, between requests) is not counted, as it
    would be, under valgrind's slowness, in whichever requests it fell among."""
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(1.0)
        if cpu_seconds(pid) - before < IDLE_CPU_SECONDS:
            return
    raise RuntimeError(f"the contender on PID {pid} did not go idle under valgrind")


def callgrind_totals(
    contender: Contender,
    body: bytes,
    options: list[str],
    load: Callable[[], int],
    warm_up: int = WARM_UP,
    cpu: str | None = None,
) -> tuple[dict[str, int], int]:
    """callgrind's totals of each event over ``load`` (which returns the requests it made) and
    those requests: ``contender``'s server runs under callgrind with ``options`` (on ``cpu``, if
    given), counting off while it starts, answers ``warm_up`` requests and goes idle."""
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", *options, "--instr-atstart=no", f"--callgrind-out-file={out}"]
        server = subprocess.Popen(
            on_cpu(cpu, [*command, *contender.command]) if cpu else [*command, *contender.command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            cwd=CHECKOUT,
        )
        try:
            _send(contender.port, body, warm_up, time.monotonic() + 600)
            _wait_idle(server.pid, time.monotonic() + 600)
            subprocess.run(["callgrind_control", "-i", "on", str(server.pid)], check=True, capture_output=True)
            requests = load()
            subprocess.run(["callgrind_control", "-i", "off", str(server.pid)], check=True, capture_output=True)
        finally:
            server.send_signal(signal.SIGINT)  # a clean exit writes the counts
            server.wait(timeout=300)
        lines = out.read_text().splitlines()
    events = next(line for line in lines if line.startswith("events:")).split()[1:]
    totals = next(line for line in lines if line.startswith("totals:")).split()[1:]
    return dict(zip(events, map(int, totals))), requests


def count(contender: Contender, body: bytes, requests: int) -> int:
    """Instructions per request of ``contender``'s server, over ``requests`` on one connection."""

    def load() -> int:
        _send(contender.port, body, requests, time.monotonic() + 60)
        return requests

    totals, counted = callgrind_totals(contender, body, [], load)
    return totals["Ir"] // counted


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
