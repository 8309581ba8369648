"""Claude Code against `mockllama serve`, in a network namespace with loopback alone: the table of
docs/claude-code.md made afresh and compared, and what it shows held true.

Claude Code is pinned in tests/claude-code/package.json and its lockfile; `npm ci --prefix
tests/claude-code --ignore-scripts` installs it (scripts/test does). MOCKLLAMA_CLIENTS=0 switches
this tier off; switched on, a missing Claude Code fails it, never skips.
"""

from __future__ import annotations

import json
import os

import pytest

from mockllama.pytest_plugin.session import base_url_behaviours
from support import claude_code
from support.claude_code import PACKAGE, PAGE, UNCHOSEN, WRITE, cases, render, table_in


@pytest.fixture(scope="module")
def lines():
    if os.environ.get("MOCKLLAMA_CLIENTS") == "0":
        pytest.skip("MOCKLLAMA_CLIENTS=0: the Claude Code runs are switched off")
    problem = claude_code.missing()
    if problem:
        pytest.fail(problem, pytrace=False)
    return claude_code.observe()


@pytest.fixture(scope="module")
def seen(lines):
    """(model, behaviour) -> the line."""
    return {(line["model"], line["behaviour"]): line for line in lines}


def messages(line) -> list[tuple[int, str | None]]:
    return [(status, scenario) for path, status, scenario, _ in line["reached"] if path.endswith("/v1/messages")]


def test_the_page_table_matches_a_fresh_run(lines):
    assert table_in(PAGE.read_text()) == render(lines), f"run: {WRITE}"


def test_claude_code_is_pinned_in_the_lockfile_as_in_the_package():
    lock = json.loads((PACKAGE / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/@anthropic-ai/claude-code"]["version"] == claude_code.version()
    assert claude_code.version().startswith("2.1.")


def test_every_messages_scenario_is_run_in_every_behaviour(seen):
    models = [model for model, _ in cases()]
    assert "messages-cut-8" in models and "messages-tool-forced-cut-20" in models and models[-1] == UNCHOSEN
    assert sorted(seen) == sorted((model, behaviour) for model in models for behaviour in base_url_behaviours())


def test_on_a_cut_reply_it_asks_again_then_gives_up_saying_so(seen):
    for behaviour in base_url_behaviours():
        line = seen[("messages-cut-8", behaviour)]
        asked = messages(line)
        assert len(asked) > 1 and set(asked) == {(200, "messages-cut-8")}, asked
        assert line["exit"] != 0 and "output token maximum" in line["said"], line


def test_a_cut_tool_use_runs_it_to_its_turn_limit(seen):
    for behaviour in base_url_behaviours():
        line = seen[("messages-tool-forced-cut-20", behaviour)]
        assert messages(line) == [(200, "messages-tool-forced-cut-20")] * 3
        assert line["exit"] != 0 and "max turns" in line["said"].lower(), line


def test_its_own_model_reaches_no_recording_and_it_says_so(seen):
    for behaviour in base_url_behaviours():
        line = seen[(UNCHOSEN, behaviour)]
        assert messages(line) and all(status == 404 for status, _ in messages(line)), line
        assert line["exit"] != 0
