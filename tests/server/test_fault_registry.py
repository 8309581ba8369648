"""The registry of fault kinds: a fault is one module of ``server.faults.kinds``, and every list of
faults (``serve --help``, the parser's, the table in docs/faults.md, the fault matrix) is made from
the registry. A throwaway fault written as one module into a copy of the checkout is parsed from the
header, listed by ``serve --help``, and given a row in the two tables ``scripts/regenerate`` makes of
it (the faults' and the modules'); no other file changes."""

from __future__ import annotations

import json
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mockllama.server.faults import (
    KIND_MODULES,
    KINDS,
    Fault,
    FaultKind,
    SdkOutcome,
    Seen,
    help_lines,
    markdown_table,
    parse_fault,
    register,
    usage,
)
from mockllama.teaching.fault_matrix import faults_measured
from support import ROOT
from support.docs_pages import DOCS, blocks
from support.httpkit import post_json
from support.recordings import SCENARIOS

PLAIN = {"model": "text-finishes", "input": "anything"}


@pytest.fixture
def teapot():
    """A fault registered for one test, as a new fault's class registers itself; gone after it."""

    @register
    class Teapot(FaultKind):
        name, order, value, seen = "teapot", 1000, "N", Seen.ERROR_STATUS
        help = "answer 418, N times over"
        wire = "a 418 status with the reply's own body"
        measured = {2: SdkOutcome.raises("APIStatusError: Error code: 418", requests=1)}

        def apply(self, value, outgoing, plan):
            outgoing.status, outgoing.reason = 418, "I'm a teapot"

    yield KINDS["teapot"]
    del KINDS["teapot"]


def test_a_registered_fault_is_parsed_listed_and_applied(teapot, start_server):
    assert parse_fault("teapot=2") == Fault(teapot, 2) and "teapot=N" in usage()
    assert "teapot=N" in help_lines()[-1] and "answer 418, N times over" in help_lines()[-1]
    assert "teapot=2" in faults_measured(SCENARIOS)
    assert "| `teapot=N` | a 418 status with the reply's own body |" in markdown_table()
    server = start_server(faults={"text-finishes": "teapot=3"})
    status, headers, body = post_json(server.url, "/v1/responses", PLAIN)
    assert status == 418 and headers["X-Mockllama-Fault"] == "teapot=3"
    assert body == SCENARIOS["text-finishes"].find("POST", "/v1/responses", False).body


def test_a_fault_name_is_registered_once(teapot):
    with pytest.raises(ValueError, match="a fault named 'teapot' is registered already"):
        register(type("Another", (FaultKind,), {"name": "teapot"}))


def test_a_kind_that_leaves_out_a_declaration_is_refused():
    with pytest.raises(TypeError, match="the fault kind Vague does not declare help, wire, seen"):
        register(type("Vague", (FaultKind,), {"name": "vague", "order": 5}))
    assert "vague" not in KINDS


def test_a_kind_takes_the_place_its_order_says():
    placed = type(
        "Between", (FaultKind,), {"name": "between", "order": 15, "help": "", "wire": "", "seen": Seen.DROPPED}
    )
    try:
        register(placed)
        assert list(KINDS)[:3] == ["disconnect", "between", "disconnect-bytes"]
    finally:
        del KINDS["between"]


def test_each_module_of_the_kinds_package_is_one_registered_kind():
    package = sys.modules[KIND_MODULES]
    modules = [f"{KIND_MODULES}.{module.name}" for module in pkgutil.iter_modules(package.__path__)]
    assert sorted(type(kind).__module__ for kind in KINDS.values()) == sorted(modules)


def test_every_value_measured_declares_what_the_sdk_does():
    for text in faults_measured(SCENARIOS):
        fault = parse_fault(text)
        assert isinstance(fault.kind.outcome(fault.value), SdkOutcome), text


def test_serve_help_lists_every_registered_fault():
    result = subprocess.run([sys.executable, "-m", "mockllama", "serve", "--help"], capture_output=True, text=True)
    listed = [line.strip() for line in result.stdout.splitlines()]
    assert [line.strip() for line in help_lines()] == [line for line in listed if line in help_lines()]
    assert len(help_lines()) == len(KINDS)


# --- one module is all a new fault needs ----------------------------------------------------------

# A new fault as a contributor writes it: the worked example of docs/development.md ("A fault").
TEAPOT = "mockllama/server/faults/kinds/teapot.py"


def teapot_module() -> str:
    (shown,) = [
        block for block in blocks(DOCS / "development.md") if block.not_run and Path(__file__).name in block.not_run
    ]
    return shown.source


# What the copy makes of the header a request would carry.
FROM_THE_HEADER = """
import json
from mockllama.server.faults import FaultPlan

fault = FaultPlan.build({}).choose("teapot=2", "any scenario")
print(json.dumps([str(fault), type(fault.kind).__module__]))
"""


def _checkout_copy(tmp_path: Path) -> Path:
    """What scripts/regenerate reads and writes, copied; the recordings linked."""
    for tree in ("mockllama", "docs", "scripts", "tests/support"):
        shutil.copytree(ROOT / tree, tmp_path / tree, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("README.md", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    for recordings in ("cassettes", "cassettes-patched"):
        (tmp_path / recordings).symlink_to(ROOT / recordings)
    return tmp_path


def _run(copy: Path, *arguments: str) -> str:
    """Python in the copy, on the copy's package; what it printed."""
    env = {**os.environ, "PYTHONPATH": str(copy), "MOCKLLAMA_INDEX_DIR": str(copy / ".index")}
    result = subprocess.run(
        [sys.executable, *arguments], cwd=copy, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _files(copy: Path) -> dict[str, list[str]]:
    """Every file of the copy (not the linked recordings), by its path, as lines."""
    return {
        str(path.relative_to(copy)): path.read_text(encoding="utf-8").splitlines()
        for tree in ("mockllama", "docs", "scripts", "tests", "README.md", "pyproject.toml")
        for path in ([copy / tree] if (copy / tree).is_file() else (copy / tree).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".png", ".gz")
    }


def test_one_module_is_all_a_new_fault_needs(tmp_path):
    copy = _checkout_copy(tmp_path)
    _run(copy, "scripts/regenerate")  # the copy as the checkout would be with every part fresh
    before = _files(copy)
    (copy / TEAPOT).write_text(teapot_module(), encoding="utf-8")
    _run(copy, "scripts/regenerate")
    after = _files(copy)

    # the module, and what scripts/regenerate made of it: a row in each of two tables, nothing else
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    assert changed == {TEAPOT, "docs/faults.md", "docs/architecture.md"}
    for page, row in [
        ("docs/faults.md", "| `teapot=N` | a 418 status with the reply's own body | an HTTP error status"),
        ("docs/architecture.md", "| 5 | `server/faults/kinds/teapot.py` | ``teapot=N``: a 418, N times over. |"),
    ]:
        added = [line for line in after[page] if line not in before[page]]
        assert len(added) == 1 and added[0].startswith(row), added
        assert set(before[page]) <= set(after[page])  # nothing else on the page changed
    table = "\n".join(after["docs/faults.md"])
    assert table.index("| `truncate-json` |") < table.index("| `teapot=N` |") < table.index("| `stall=MS` |")

    # a request's header names it, and serve --help lists it in its place
    assert json.loads(_run(copy, "-c", FROM_THE_HEADER)) == ["teapot=2", "mockllama.server.faults.kinds.teapot"]
    listed = _run(copy, "-m", "mockllama", "serve", "--help")
    assert "answer 418, N times over" in listed
    assert listed.index("truncate-json ") < listed.index("teapot=N ") < listed.index("stall=MS ")
    assert "teapot" not in KINDS  # the copy's, not this process's
