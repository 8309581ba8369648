"""The error replies behind status=CODE, recorded again from a fresh llama-server and compared."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios
from mockllama.server.faults import recorded_errors

pytestmark = pytest.mark.live
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "record-server-errors.py"


def _errors(directory: Path) -> dict[int, dict]:
    scenarios = load_scenarios([directory])
    return {code: json.loads(i.body)["error"] for code, i in recorded_errors(scenarios).items()}


def test_llama_server_still_answers_the_recorded_errors(llama_installed, tmp_path):
    from livekit import free_port

    out = tmp_path / "server-errors"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(out), str(free_port())], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    fresh = _errors(out)
    bundled = _errors(next(bundled_cassette_dir().glob("*/smollm2-135m-instruct-q4_1-server-errors")))
    assert set(fresh) == {400, 401, 404, 501, 503}
    for code, error in fresh.items():
        assert error == bundled[code], code
    assert b"Bearer" not in b"".join(path.read_bytes() for path in out.iterdir())  # the key was never written
