"""The tools every Python project has, run by the test command: ruff's linter and formatter, on
the whole checkout, and mypy on the package, as configured in pyproject.toml. Each is shown to fail
once on a copy with a deliberate fault: a check that has never failed proves nothing."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUFF = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    assert RUFF, 'ruff is missing: pip install ".[test]"'
    return subprocess.run([RUFF, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", [("check", "--no-cache", "."), ("format", "--no-cache", "--check", ".")])
def test_ruff_passes_on_the_checkout(command):
    result = _ruff(*command)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "command, fault",
    [
        (("check", "--no-cache", "."), "import os\n"),  # unused import
        (("format", "--no-cache", "--check", "."), "x = {  'a':1 }\n"),  # not formatted
    ],
)
def test_ruff_fails_on_a_deliberate_fault(tmp_path, command, fault):
    shutil.copytree(ROOT / "mockllama", tmp_path / "mockllama", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "mockllama" / "deliberate.py").write_text(fault)
    result = _ruff(*command, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "deliberate.py" in result.stdout + result.stderr


def _mypy(cwd: Path = ROOT) -> subprocess.CompletedProcess:
    assert importlib.util.find_spec("mypy"), 'mypy is missing: pip install ".[test]"'
    # No arguments: pyproject.toml's [tool.mypy] says what is checked, as for a user who runs `mypy`.
    return subprocess.run([sys.executable, "-m", "mypy"], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_mypy_passes_on_the_package():
    result = _mypy()
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_fails_on_a_deliberate_type_error(tmp_path):
    shutil.copytree(ROOT / "mockllama", tmp_path / "mockllama", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if (ROOT / ".mypy_cache").is_dir():  # the checkout's cache, so that only the changed file is checked again
        shutil.copytree(ROOT / ".mypy_cache", tmp_path / ".mypy_cache")
    (tmp_path / "mockllama" / "deliberate.py").write_text('count: int = "three"\n')
    result = _mypy(cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "deliberate.py:1: error" in result.stdout, result.stdout + result.stderr
