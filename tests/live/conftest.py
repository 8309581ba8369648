"""The live tier: a real llama-server b11434, installed or reused by scripts/llama-server.sh.

Set MOCKLLAMA_LIVE=0 to skip it. Otherwise a failure to install or start llama-server fails
the tests; it never skips them.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from livekit import free_port, wait_for_health

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "llama-server.sh"


@dataclass
class LiveServer:
    url: str
    command: str
    process: subprocess.Popen

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _set_up(*flags: str) -> None:
    if os.environ.get("MOCKLLAMA_LIVE") == "0":
        pytest.skip("MOCKLLAMA_LIVE=0: the live llama-server tier is switched off")
    started = time.monotonic()
    result = subprocess.run(["bash", str(SCRIPT), "setup", *flags], capture_output=True, text=True, timeout=3600)
    if result.returncode != 0:
        pytest.fail(
            f"scripts/llama-server.sh setup {' '.join(flags)} failed ({result.returncode}):\n{result.stderr[-5000:]}"
        )
    print(f"\nllama-server {' '.join(flags)} ready after {time.monotonic() - started:.0f} s of set-up", file=sys.stderr)


@pytest.fixture(scope="session")
def llama_installed() -> None:
    _set_up()


@pytest.fixture(scope="session")
def patched_llama_installed() -> None:
    """The same build with patches/llama-server-responses-incomplete.patch applied."""
    _set_up("--patched")


def _starter(tmp_path_factory, flags: tuple[str, ...], servers: list):
    def start(*server_args: str) -> LiveServer:
        """A fresh llama-server; server_args are added to its command line (e.g. "--api-key", KEY)."""
        port = free_port()
        command = subprocess.run(
            ["bash", str(SCRIPT), "command", *flags, str(port)], capture_output=True, text=True, check=True
        ).stdout.strip()
        log = tmp_path_factory.mktemp("llama-server") / "server.log"
        with log.open("w") as sink:
            process = subprocess.Popen([*shlex.split(command), *server_args], stdout=sink, stderr=subprocess.STDOUT)
        servers.append(LiveServer(f"http://127.0.0.1:{port}", command, process))
        wait_for_health(servers[-1].url, process, log)
        return servers[-1]

    return start


@pytest.fixture(scope="session")
def start_llama_server(llama_installed, tmp_path_factory):
    """Start fresh llama-servers: a fresh one answers a given request sequence deterministically."""
    servers = []
    yield _starter(tmp_path_factory, (), servers)
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def start_patched_llama_server(patched_llama_installed, tmp_path_factory):
    """Start fresh patched llama-servers (scripts/llama-server.sh --patched)."""
    servers = []
    yield _starter(tmp_path_factory, ("--patched",), servers)
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def start_forced_thinking_server(llama_installed, tmp_path_factory):
    """Start fresh stock llama-servers with the forced-thinking set-up (the sdist's Qwen-QwQ-32B.jinja)."""
    servers = []
    yield _starter(tmp_path_factory, ("--setup", "smollm2-135m-forced-thinking"), servers)
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def start_patched_forced_thinking_server(patched_llama_installed, tmp_path_factory):
    """Start fresh patched llama-servers with the forced-thinking set-up."""
    servers = []
    yield _starter(tmp_path_factory, ("--patched", "--setup", "smollm2-135m-forced-thinking"), servers)
    for server in servers:
        server.stop()
