"""The package's layers (docs/architecture.md), held by import-linter's contracts in pyproject.toml.

`lint-imports` passes on the package as it is, and fails on a copy where a leaf imports the server
or the package imports the benchmark (benchmarks/, which the wheel leaves out):
a contract that has never failed proves nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or shutil.which("lint-imports")


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    assert LINT_IMPORTS, 'lint-imports is missing: pip install ".[test]" (import-linter)'
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_every_import_runs_down_the_layers():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    "module, climbing_import, contract",
    [
        ("wire/routes.py", "import mockllama.server.app", "Layers along the request's journey"),
        ("recordings/cassettes.py", "from mockllama.matching import keys", "Layers along the request's journey"),
        ("behaviours/fixed.py", "from mockllama.matching import canonical", "do not know each other"),
        ("server/journal.py", "from benchmarks import harness", "The package never imports the benchmark"),
    ],
)
def test_an_import_that_breaks_a_contract_fails(tmp_path, module, climbing_import, contract):
    for package in ("mockllama", "benchmarks"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "mockllama" / module, "a") as source:
        source.write(f"\n{climbing_import}  # a deliberate break\n")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{contract}" in result.stdout and "BROKEN" in result.stdout
