"""mockllama check against the real llama-server: it has the bug, so exit 1."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.live


def test_check_finds_the_bug_in_llama_server(start_llama_server):
    server = start_llama_server()
    try:
        text = subprocess.run([sys.executable, "-m", "mockllama", "check", server.url],
                              capture_output=True, text=True, timeout=600)
        every = subprocess.run([sys.executable, "-m", "mockllama", "check", server.url, "--probe", "all"],
                               capture_output=True, text=True, timeout=600)
    finally:
        server.stop()
    print(text.stdout, every.stdout)
    assert text.returncode == 1, text.stdout + text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("/v1/responses max_output_tokens=8: status='completed' incomplete_details=None")
    assert lines[1] == "/v1/chat/completions max_tokens=8: finish_reason='length'"
    assert lines[2] == f"{server.url}: a reply cut off at max_output_tokens is reported as 'completed'."
    assert every.returncode == 1
    assert "last event='response.completed' status='completed'" in every.stdout
    assert "function_call_arguments.done for 0 of 1 calls" in every.stdout
