"""Scenario lists read in order: by family, then series, then limit (`mockllama scenarios`, the teaching page)."""

from __future__ import annotations

import json
import subprocess
import sys

from mockllama.recordings.cassettes import reading_order
from mockllama.teaching.explain import stories
from support.recordings import SCENARIOS


def _in_order(names: list[str], expected: list[str]) -> bool:
    return [name for name in names if name in expected] == expected


def _listed() -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "mockllama", "scenarios", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return [json.loads(line)["name"] for line in result.stdout.splitlines()]


def test_mockllama_scenarios_lists_by_family_then_limit():
    names = _listed()
    assert names[:7] == [
        "text-cut-8",
        "text-cut-8-null-instructions",
        "text-exact-limit",
        "text-cut-16",
        "text-cut-64",
        "text-finishes",
        "text-finishes-null-instructions",
    ]
    # by limit, not by name (a name sort puts tool-cut-20 before tool-cut-8)
    assert _in_order(names, ["tool-cut-8", "tool-cut-20", "tool-cut-30", "tool-finishes"])
    assert _in_order(names, ["ladder-cut-8", "ladder-cut-16", "ladder-finishes"])
    # a series stays together, after its family's plain one
    assert _in_order(names, ["tool-finishes", "tool-conversation-cut-20", "tool-conversation"])
    families = [name.split("-")[0] for name in names]
    assert _in_order(list(dict.fromkeys(families)), ["text", "ladder", "tool", "poem", "messages", "thinking"])
    assert sorted(name for name in names if "@" not in name) == sorted(SCENARIOS)  # a sweep's one line apart
    assert _in_order(names, ["tool-finishes", "tool-call@1-37", "tool-conversation"])  # a sweep reads by its name


def test_a_family_of_ones_own_reads_by_limit_after_the_bundled_families():
    limits = {"count-cut-16": 16, "zebra-cut-1": 1, "count-finishes": 400, "count-cut-8": 8, "tool-cut-8": 8}
    ordered = sorted([*limits, "text-finishes"], key=lambda name: reading_order(name, limits.get(name, 400)))
    assert ordered[:2] == ["text-finishes", "tool-cut-8"]
    assert _in_order(ordered, ["count-cut-8", "count-cut-16", "count-finishes"])
    assert ordered[-1] == "zebra-cut-1"


def test_the_teaching_page_lists_responses_scenarios_first_each_in_reading_order():
    names = [told["name"] for told in stories(SCENARIOS)]
    assert _in_order(names, ["text-cut-8", "text-exact-limit", "text-cut-16", "text-cut-64", "text-finishes"])
    assert names[0] == "text-cut-8"
    assert _in_order(names, ["tool-cut-8", "tool-cut-20", "tool-cut-30", "tool-finishes", "tool-conversation-cut-20"])
    assert _in_order(names, ["thinking-finishes", "messages-cut-8", "errors"])
