"""``mockllama serve`` in a process of its own, for what only a process shows: a signal, a resource
limit, a mount namespace."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path


@contextlib.contextmanager
def serve_process(args: list[str], log: Path, wrapper: list[str] = (), preexec_fn=None):
    """``[*wrapper, python -m mockllama serve ARGS --port 0]``; yields (process, url). Its log (stderr)
    goes to ``log``; it is stopped at the end if still running."""
    with open(log, "w") as sink:
        process = subprocess.Popen(
            [*wrapper, sys.executable, "-m", "mockllama", "serve", *args, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
            preexec_fn=preexec_fn,
        )
        try:
            url = process.stdout.readline().strip()  # serve's first line is its URL, once it listens
            assert url.startswith("http://127.0.0.1:"), f"serve's first line is {url!r}; its log: {log.read_text()}"
            yield process, url
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            process.stdout.close()
