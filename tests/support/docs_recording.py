"""Run docs/upstream.md, "Recording your own client's traffic", as written, against an upstream."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
from pathlib import Path

from support.docs_pages import DOCS, blocks
from support.waiting import wait_until_listening

PAGE = DOCS / "upstream.md"
PAGE_UPSTREAM = "http://127.0.0.1:8080"  # the llama-server the page records from
PAGE_PORT = "18090"


def section() -> tuple[list[str], str, str]:
    """(the page's two `mockllama serve` commands, its Python example, the output its comment promises)."""
    shown = blocks(PAGE)
    commands = [block.source.strip() for block in shown if block.source.startswith("mockllama serve")]
    example = next(block.source for block in shown if block.language == "python")
    promised = next(line[2:] for line in example.splitlines() if line.startswith("# "))
    return commands, example, promised


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_mockllama(command: str, port: int, cwd: Path, upstream: str = PAGE_UPSTREAM) -> subprocess.Popen:
    """Run a `mockllama serve ...` command line (the page's upstream replaced) on `port`."""
    args = shlex.split(command.replace(PAGE_UPSTREAM, upstream))
    assert args[0] == "mockllama"
    process = subprocess.Popen(
        [sys.executable, "-m", "mockllama", *args[1:], "--port", str(port)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_listening(process, port, 30, repr(command))
    except AssertionError:
        process.kill()
        raise
    return process


def stop_mockllama(process: subprocess.Popen) -> str:
    process.terminate()
    try:
        output, _ = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    return output


def run_section(upstream: str, workdir: Path) -> list[tuple[str, str]]:
    """Each command of the page with the example run against it: [(command's output, example's)]."""
    commands, example, _ = section()
    results = []
    for command in commands:
        port = _free_port()
        server = start_mockllama(command, port, workdir, upstream)
        try:
            ran = subprocess.run(
                [sys.executable, "-c", example.replace(PAGE_PORT, str(port))],
                cwd=workdir,
                capture_output=True,
                text=True,
                timeout=300,
            )
        finally:
            log = stop_mockllama(server)
        assert ran.returncode == 0, ran.stderr + log
        results.append((log, ran.stdout.strip()))
    return results
