"""Waiting for what another thread or process does. The bounds are for a loaded 2-core machine,
not timing tests: a wait that ends early only saves time."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable


def wait_for(condition: Callable[[], object], seconds: float = 10, interval: float = 0.02) -> bool:
    """Until ``condition()`` holds, or ``seconds`` have passed; whether it holds."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
    return True


def wait_until_listening(process: subprocess.Popen, port: int, seconds: float, what: str) -> None:
    """Until ``process`` accepts connections on ``port``; an AssertionError with its output if it
    exits first, or if ``seconds`` pass. ``what``: the command, for the message."""

    def listening() -> bool:
        if process.poll() is not None:
            output = process.stderr if process.stderr is not None else process.stdout
            raise AssertionError(f"{what} exited {process.returncode}: {output.read() if output else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    if not wait_for(listening, seconds, interval=0.05):
        raise AssertionError(f"{what} did not start listening on port {port} within {seconds:g} s")
