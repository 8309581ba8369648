"""What every benchmark shares: the contenders, starting one pinned to its core, driving wrk from
the other, and reading a process's CPU time and peak RSS."""

from __future__ import annotations

import compileall
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from mockllama.recordings.catalogue import load_catalogue
from mockllama.wire.routes import RESPONSES_PATH

SERVER_CPU, LOAD_CPU = "0", "1"
# The checkout the bench runs from: its own servers (the floor) start as ``python -m benchmarks`` there.
CHECKOUT = Path(__file__).resolve().parent.parent
# The workloads, (scenario, stream): a non-streamed reply and a streamed one with a tool call.
TEXT = ("text-cut-8", False)
STREAM = ("poem-finishes", True)
WORKLOADS = (TEXT, STREAM)
# The bare aiohttp server every ratio is held against (benchmarks.floor), by its name in the tables.
FLOOR = "floor (bare aiohttp)"
# The same bytes from aiohttp's low-level server, no router (benchmarks.floor, --low-level): the ceiling of
# any server built on aiohttp, beside the floor in every table.
LOW_LEVEL = "aiohttp low-level server"
BEHAVIOURS = ("buggy", "fixed", "spec")


@dataclass(frozen=True)
class Contender:
    """A server the bench measures: its name in the tables, the command that serves it on ``port``,
    the environment it needs (None: the bench's own) and the workloads it can answer."""

    name: str
    command: tuple[str, ...]
    port: int
    env: dict[str, str] | None = None
    workloads: tuple[tuple[str, bool], ...] = WORKLOADS

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def floor_command(port: int, low_level: bool = False) -> tuple[str, ...]:
    """The command that serves the floor on ``port``, or with ``low_level`` the same replies from
    aiohttp's low-level server (benchmarks.floor)."""
    return (sys.executable, "-m", "benchmarks.floor", str(port), *(("--low-level",) if low_level else ()))


def mockllama_command(port: int, *options: str) -> tuple[str, ...]:
    """``mockllama serve`` on ``port``, with ``options``."""
    return (sys.executable, "-m", "mockllama", "serve", "--port", str(port), *options)


def contenders(port_for) -> list[Contender]:
    """The floor, aiohttp's low-level server and mockllama in each behaviour, each on a port from ``port_for``."""
    floor, low_level = port_for(), port_for()
    found = [
        Contender(FLOOR, floor_command(floor), floor),
        Contender(LOW_LEVEL, floor_command(low_level, low_level=True), low_level),
    ]
    for behaviour in BEHAVIOURS:  # spec adds a per-request step (its replies echo the request): its row is its cost
        port = port_for()
        found.append(Contender(f"mockllama {behaviour}", mockllama_command(port, "--behaviour", behaviour), port))
    return found


def compile_bytecode() -> None:
    """The package's and the bench's bytecode written, as pip writes it when it installs a wheel: a
    checkout run with PYTHONDONTWRITEBYTECODE would otherwise compile every module at every start."""
    for package in ("mockllama", "benchmarks"):
        compileall.compile_dir(CHECKOUT / package, quiet=1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request_body(scenario: str, stream: bool) -> bytes:
    entry = next(e for e in load_catalogue() if e.name == scenario)
    planned = next(p for p in entry.planned() if p.path == RESPONSES_PATH and p.json["stream"] is stream)
    return json.dumps(planned.json).encode()


def _post(url: str, body: bytes, timeout: float = 2.0) -> int:
    request = urllib.request.Request(url + RESPONSES_PATH, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        response.read()
        return response.status


def on_cpu(cpu: str, command: list[str]) -> list[str]:
    """``command`` pinned to ``cpu`` where taskset and a second core allow."""
    return ["taskset", "-c", cpu, *command] if shutil.which("taskset") and os.cpu_count() >= 2 else command


def start_contender(
    contender: Contender, body: bytes | None = None, timeout: float = 30, pinned: bool = True
) -> tuple[subprocess.Popen, float]:
    """Start a contender's process; return it and the seconds from start to its first 200 to ``body``
    (by default the text-cut-8 request). ``pinned``: on the server's own core, away from wrk's;
    else on every core, as a user starts it."""
    body = body or request_body(*TEXT)
    command = list(contender.command)
    started = time.perf_counter()
    process = subprocess.Popen(
        on_cpu(SERVER_CPU, command) if pinned else command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=contender.env,
        cwd=CHECKOUT,
    )
    deadline = started + timeout
    while time.perf_counter() < deadline:
        try:
            if _post(contender.url, body, timeout=0.5) == 200:
                return process, time.perf_counter() - started
        except OSError:
            # Back off in proportion to the time so far: each refused try costs the poller CPU that
            # a first start using every core would otherwise have.
            time.sleep(min(0.05, max(0.002, (time.perf_counter() - started) / 50)))
    process.kill()
    raise RuntimeError(f"{' '.join(command)} did not answer within {timeout:.0f} s")


# A test that starts the plugin's server (the mockllama fixture) and sends it one request.
PLUGIN_TEST = """
import urllib.request

def test_one_request(mockllama):
    body = {body!r}
    request = urllib.request.Request(mockllama.url + "/v1/responses", data=body,
                                     headers={{"Content-Type": "application/json"}})
    with urllib.request.urlopen(request) as response:
        assert response.status == 200
"""


def pytest_session_seconds(test_file: Path, *options: str, pinned: bool = False, env: dict | None = None) -> float:
    """Wall time of a pytest session that runs ``test_file`` in its own directory; ``pinned``: on
    the server's core, as the servers are."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, str(test_file)]
    started = time.perf_counter()
    subprocess.run(
        on_cpu(SERVER_CPU, command) if pinned else command,
        cwd=test_file.parent,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - started


def peak_rss_mb(process: subprocess.Popen) -> float:
    """VmHWM of the server process (the python under taskset, which execs it in place)."""
    status = Path(f"/proc/{process.pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def _milliseconds(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(url: str, body: bytes, connections: int, duration: int) -> tuple[float, float, float]:
    """(requests per second, p50 ms, p99 ms) from wrk, in its own process on its own core."""
    out = _wrk(url, body, connections, duration)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = _milliseconds(re.search(r"^\s+50%\s+(\S+)\s*$", out, re.M).group(1))
    p99 = _milliseconds(re.search(r"^\s+99%\s+(\S+)\s*$", out, re.M).group(1))
    return rps, p50, p99


def _wrk(url: str, body: bytes, connections: int, duration: int) -> str:
    """wrk's report; an error when wrk saw failed requests."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(
            'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
            f"wrk.body = {json.dumps(body.decode())}\n"
        )
    try:
        threads = min(connections, 2)
        command = [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{duration}s",
            "--timeout",
            "60s",
            "--latency",
            "-s",
            script.name,
            url + RESPONSES_PATH,
        ]
        out = subprocess.run(on_cpu(LOAD_CPU, command), capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(script.name)
    # llama-server answers "Connection: close", which wrk counts as read errors: those are fine.
    socket_errors = re.search(r"Socket errors: connect (\d+), read \d+, write (\d+), timeout (\d+)", out)
    if "Non-2xx or 3xx responses" in out or (socket_errors and any(int(n) for n in socket_errors.groups())):
        raise RuntimeError(f"{url}: wrk saw errors:\n{out}")
    return out


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process has used (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_per_request(url: str, pid: int, body: bytes, connections: int, duration: int) -> float:
    """Server CPU microseconds per request over one wrk run: what throughput on a core of its own
    would be, and far less swayed than req/s by other work on a shared machine."""
    before = cpu_seconds(pid)
    requests = requests_served(url, body, connections, duration)
    return (cpu_seconds(pid) - before) / requests * 1e6


def requests_served(url: str, body: bytes, connections: int, duration: int) -> int:
    """The requests wrk completed in one run."""
    return int(re.search(r"(\d+) requests in", _wrk(url, body, connections, duration)).group(1))
