"""Run the README's "Record your own client's traffic" section as written, against an upstream."""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Record your own client's traffic"
README_UPSTREAM = "http://127.0.0.1:8080"
README_PORT = "18090"


def section() -> tuple[list[str], str, str]:
    """(the two `mockllama serve` commands, the Python example, the output its comment promises)."""
    text = README.read_text(encoding="utf-8")
    part = text[text.index(SECTION):]
    part = part[: part.index("\n## ", len(SECTION))]
    blocks = re.findall(r"```(\w*)\n(.*?)```", part, re.S)
    commands = [code.strip() for _, code in blocks if code.strip().startswith("mockllama serve")]
    example = next(code for language, code in blocks if language == "python")
    promised = next(line[2:] for line in example.splitlines() if line.startswith("# "))
    return commands, example, promised


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_mockllama(command: str, port: int, cwd: Path, upstream: str = README_UPSTREAM) -> subprocess.Popen:
    """Run a `mockllama serve ...` command line (the README's upstream replaced) on `port`."""
    args = shlex.split(command.replace(README_UPSTREAM, upstream))
    assert args[0] == "mockllama"
    process = subprocess.Popen([sys.executable, "-m", "mockllama", *args[1:], "--port", str(port)], cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{command!r} exited {process.returncode}: {process.stdout.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"{command!r} did not listen on port {port}")


def stop_mockllama(process: subprocess.Popen) -> str:
    process.terminate()
    try:
        output, _ = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    return output


def run_section(upstream: str, workdir: Path) -> list[tuple[str, str]]:
    """Each command of the section with the example run against it: [(command's output, example's)]."""
    commands, example, _ = section()
    results = []
    for command in commands:
        port = _free_port()
        server = start_mockllama(command, port, workdir, upstream)
        try:
            ran = subprocess.run([sys.executable, "-c", example.replace(README_PORT, str(port))], cwd=workdir,
                                 capture_output=True, text=True, timeout=300)
        finally:
            log = stop_mockllama(server)
        assert ran.returncode == 0, ran.stderr + log
        results.append((log, ran.stdout.strip()))
    return results
