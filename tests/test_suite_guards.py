"""The test suite's own guards: what would let a tier, a parameter or a behaviour silently vanish."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
pytest_plugins = ["pytester"]

PLUGIN_PARAMS_TEST = '''
import os

def test_records_its_behaviour(mockllama_base_url, mockllama):
    behaviour = mockllama_base_url.removeprefix(mockllama.url).split("/")[1]
    with open(os.environ["SEEN_FILE"], "a") as seen:
        seen.write(behaviour + "\\n")
'''


def test_the_plugin_runs_a_base_url_test_once_per_behaviour(pytester, monkeypatch):
    seen = pytester.path / "seen.txt"
    monkeypatch.setenv("SEEN_FILE", str(seen))
    pytester.makepyfile(test_inner=PLUGIN_PARAMS_TEST)
    collected = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    assert [line for line in collected.outlines if "::" in line] == [
        f"test_inner.py::test_records_its_behaviour[{b}]" for b in ("buggy", "fixed", "spec")]
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    assert seen.read_text().split() == ["buggy", "fixed", "spec"]


def test_an_empty_parameter_list_fails_at_collection(tmp_path):
    """pyproject.toml sets empty_parameter_set_mark = fail_at_collect: no test skips for want of cases."""
    (tmp_path / "test_empty.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('case', [])\ndef test_nothing(case):\n    pass\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
         "-p", "no:cacheprovider", str(tmp_path / "test_empty.py")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode != 0, result.stdout
    assert "Empty parameter set" in result.stdout


FAKE_TOOLS = {
    "chromium": "exit 0",
    "wrk": "exit 0",
    # `python3 -m venv DIR` makes a venv whose activate script does nothing
    "python3": 'mkdir -p "$3/bin" && : > "$3/bin/activate"',
    "python": "exit 0",
    "pip": "exit 0",
    "npm": "exit 0",  # npm ci --prefix tests/js
    # the README's `pytest`: report which tier switches it would see
    "pytest": 'env | grep "^MOCKLLAMA_" | sort > "$SEEN"',
}


def test_ci_runs_every_tier_whatever_the_machine_has_set(tmp_path):
    """.ci/run unsets MOCKLLAMA_LIVE, MOCKLLAMA_BROWSER and MOCKLLAMA_BENCH before the test run."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKE_TOOLS.items():
        tool = bin_dir / name
        tool.write_text(f"#!/bin/sh\n{body}\n")
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    seen = tmp_path / "seen.txt"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SEEN": str(seen), "MOCKLLAMA_CI_VENV": str(tmp_path / "venv"),
           "MOCKLLAMA_LIVE": "0", "MOCKLLAMA_BROWSER": "0", "MOCKLLAMA_BENCH": "0", "HOME": os.environ.get("HOME", "/")}
    result = subprocess.run(["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert seen.exists(), "the fake pytest was not run"
    assert seen.read_text().split() == [f"MOCKLLAMA_CI_VENV={tmp_path / 'venv'}"]
