"""The client tier at the newest versions (MOCKLLAMA_CLIENTS_NEWEST=1, tests/support/newest_clients.py):
the report of what differs from the pages, and the switch, off unless set. Only the last test needs
the network, and it runs only with the switch on."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from support import ROOT, newest_clients
from support.newest_clients import Section, differences, pinned_versions, place, report, switched_on, unpinned

PAGE = (
    "| server | call |\n| --- | --- |\n| buggy | reads it |\n| vllm | **runs the cut call** |\n| spec | sees the cut |"
)


def test_the_switch_is_off_unless_it_says_1():
    assert not switched_on({})
    assert not switched_on({"MOCKLLAMA_CLIENTS_NEWEST": "0"})
    assert not switched_on({"MOCKLLAMA_CLIENTS_NEWEST": "yes"})
    assert switched_on({"MOCKLLAMA_CLIENTS_NEWEST": "1"})


def test_the_report_names_the_versions_that_moved_and_the_rows_that_changed_alone():
    made = PAGE.replace("| vllm | **runs the cut call** |", "| vllm | sees the cut |")
    section = Section("docs/x.md", {"ai": "6.0.1", "zod": "4.6.7"}, {"ai": "7.0.0", "zod": "4.6.7"}, PAGE, made)
    said = differences(section)
    assert "Newest: ai 6.0.1 → 7.0.0." in said and "zod" not in said
    changed = [line for line in said.splitlines() if line[:1] in ("+", "-") and line[:3] not in ("---", "+++")]
    assert changed == ["-| vllm | **runs the cut call** |", "+| vllm | sees the cut |"]
    assert "--- docs/x.md (pinned)" in said and "+++ newest" in said


def test_a_matrix_the_newest_versions_leave_as_it_is_is_said_to_be_the_same():
    section = Section("docs/x.md", {"ai": "6.0.1"}, {"ai": "7.0.0"}, PAGE, PAGE)
    assert differences(section).endswith("The same as the page.")
    assert "```diff" not in differences(section)


def test_a_refused_install_or_a_failed_run_is_said_in_place_of_a_difference():
    blocked = Section("docs/x.md", {}, {}, "", problem="blocked: npm install failed: E403")
    failed = Section("docs/y.md", {"ai": "6.0.1"}, {"ai": "7.0.0", "new": "1.0.0"}, PAGE, problem="did not run: boom")
    said = report([blocked, failed])
    assert said.startswith("# The client matrices at the newest versions\n")
    assert "## docs/x.md\n\nNewest: the pinned versions.\n\nblocked: npm install failed: E403" in said
    assert "Newest: ai 6.0.1 → 7.0.0, new (not pinned) → 1.0.0.\n\ndid not run: boom" in said
    assert "```diff" not in said


def test_the_newest_python_clients_are_the_extras_names_without_their_pins():
    assert unpinned("pydantic-ai-slim[openai]==2.68.0") == "pydantic-ai-slim[openai]"
    assert unpinned("openai==3.57.0") == "openai"
    pinned = pinned_versions("clients")
    assert len(pinned) == len(newest_clients.python_clients.pins("clients"))
    assert "pydantic-ai-slim" in pinned and all("[" not in name and "=" not in name for name in pinned)


def test_each_day_has_its_own_place_and_an_older_days_is_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = tmp_path / "mockllama"
    for name in ("js-newest-2000-01-01", "claude-code-newest-2000-01-01", "clients-llamaindex-0123456789abcdef"):
        (cache / name).mkdir(parents=True)
    (cache / "js-newest-2000-01-01.lock").write_text("")
    today = place("js")
    assert today.parent == cache and today.name.startswith("js-newest-") and today.name != "js-newest-2000-01-01"
    assert sorted(p.name for p in cache.iterdir()) == [
        "claude-code-newest-2000-01-01",
        "clients-llamaindex-0123456789abcdef",
    ]


def test_off_by_default_the_newest_run_installs_nothing_and_says_how_to_switch_it_on(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "MOCKLLAMA_CLIENTS_NEWEST"}
    env.update(XDG_CACHE_HOME=str(tmp_path), MOCKLLAMA_CLIENTS="1")
    test = f"{__file__}::test_the_client_matrices_at_the_newest_versions_are_reported_not_failed"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", test],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "1 skipped" in result.stdout and "MOCKLLAMA_CLIENTS_NEWEST=1" in result.stdout, result.stdout[-3000:]
    assert list(tmp_path.glob("mockllama/*newest*")) == []  # no virtualenv, npm prefix or report


# The files the newest run must leave as they are: the pages it compares with, the pins it ignores.
KEPT = (
    "docs/python-clients.md",
    "docs/typescript.md",
    "docs/claude-code.md",
    "pyproject.toml",
    "tests/js/package.json",
    "tests/js/package-lock.json",
    "tests/claude-code/package.json",
    "tests/claude-code/package-lock.json",
)


def _digests() -> dict[str, str]:
    return {path: hashlib.sha256((ROOT / path).read_bytes()).hexdigest() for path in KEPT}


def test_the_client_matrices_at_the_newest_versions_are_reported_not_failed():
    """Switched on, it installs the newest clients, makes each matrix, and writes what differs from the
    page to the report: a difference does not fail it; an install refused or a matrix that did not run does."""
    if os.environ.get("MOCKLLAMA_CLIENTS") == "0" or not switched_on():
        pytest.skip("the newest-version run is off: MOCKLLAMA_CLIENTS_NEWEST=1 switches it on")
    before = _digests()
    sections = newest_clients.run()
    said = report(sections)
    print(said)
    assert newest_clients.report_path().read_text() == said
    assert _digests() == before
    assert [section.page for section in sections] == [page for page, _ in newest_clients.MATRICES]
    assert not [section.problem for section in sections if section.problem], said
