"""The scenario tables of README.md and docs/scenarios.md, regenerated from the recordings.

Every column but "what it shows" comes from `mockllama scenarios --json`: each row is rendered
again from the recordings of the scenarios it names, with its own "what it shows", and must equal
the page's row byte for byte. A page's tables together name every bundled scenario once.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from support.docs_pages import DOCS, README

HEAD = "| scenario | limit | buggy status | fixed status | chat twin `finish_reason` | what it shows |"
PAGES = [README, DOCS / "scenarios.md"]


@pytest.fixture(scope="module")
def recorded() -> dict[str, dict]:
    """`mockllama scenarios --json`: one object per bundled scenario."""
    result = subprocess.run(
        [sys.executable, "-m", "mockllama", "scenarios", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return {scenario["name"]: scenario for scenario in map(json.loads, result.stdout.splitlines())}


def tables(page) -> list[list[str]]:
    """The rows of each scenario table on the page (header and rule left out)."""
    text = page.read_text(encoding="utf-8")
    found = []
    for start in (m.end() for m in re.finditer(re.escape(HEAD) + r"\n\| --- .*\n", text)):
        found.append(text[start:].split("\n\n")[0].splitlines())
    return found


def names(row: str) -> list[str]:
    return re.findall(r"`([^`]+)`", row.split(" | ")[0])


def render(row: str, recorded: dict[str, dict]) -> str:
    """The row again, its columns from the recordings, its "what it shows" from the page."""
    shows = row.removesuffix(" |").rsplit(" | ", 1)[-1]
    group = [recorded[name] for name in names(row)]
    if all(s["twin_finish_reason"] for s in group):  # Responses scenarios with a chat twin
        columns = [", ".join(str(s["limit"]) for s in group)]
        for field in ("responses_status", "fixed_status", "twin_finish_reason"):
            values = {s[field] for s in group}
            columns.append(values.pop() if len(values) == 1 else f"differ: {sorted(values)}")
    else:  # chat-only, /v1/messages, GET routes and recorded errors: replayed as they came
        columns = ["", "", "", ""]
    scenario = ", ".join(f"`{s['name']}`" for s in group)
    return "|" + "|".join(f" {cell} " if cell else " " for cell in [scenario, *columns, shows]) + "|"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_scenario_tables_are_the_recordings(page, recorded):
    rows = [row for table in tables(page) for row in table]
    assert rows, f"{page.name} has no scenario table"
    fresh = [render(row, recorded) for row in rows]
    assert rows == fresh, "the rows as the recordings have them:\n" + "\n".join(fresh)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_recorded_scenario_has_one_row(page, recorded):
    named = [name for table in tables(page) for row in table for name in names(row)]
    assert sorted(named) == sorted(recorded), f"{page.name}: missing {sorted(set(recorded) - set(named))}"


def test_a_row_is_rendered_from_the_recordings():
    recorded = {
        "a": {
            "name": "a",
            "limit": 8,
            "responses_status": "completed",
            "fixed_status": "incomplete",
            "twin_finish_reason": "length",
        },
        "b": {
            "name": "b",
            "limit": 16,
            "responses_status": "completed",
            "fixed_status": "incomplete",
            "twin_finish_reason": "length",
        },
        "m": {"name": "m", "limit": 8, "responses_status": "-", "fixed_status": "-", "twin_finish_reason": None},
    }
    assert (
        render("| `a`, `b` | 1 | x | y | z | cut |", recorded)
        == "| `a`, `b` | 8, 16 | completed | incomplete | length | cut |"
    )
    assert render("| `m` | 8 | | | | messages |", recorded) == "| `m` | | | | | messages |"


CLIENTS_HEAD = "| client | API | text request reaches | tool request reaches |"
# Each row of docs/matching.md's client table: which captured bodies (tests/support/client_bodies) it stands for.
CLIENT_ROWS = {
    ("openai 3.60.0", "Responses, chat"): lambda n: (
        n.startswith(("openai-responses.", "openai-chat.")) and not n.endswith("-catalogue")
    ),
    ("openai-agents 0.24.0", "Responses, chat"): lambda n: n.startswith("openai-agents-"),
    ("langchain-openai 1.8.1", "Responses, chat"): lambda n: n.startswith("langchain-openai-"),
    ("litellm 1.110.2", "`responses()`"): lambda n: n.startswith("litellm-responses-") and not n.endswith("-64"),
    ("litellm 1.110.2", "`completion()`"): lambda n: n.startswith("litellm-completion-"),
    ("pydantic-ai 2.68.0", "Responses, chat"): lambda n: n.startswith("pydantic-ai-"),
    ("llama-index-llms-openai 0.8.3", "`OpenAIResponses`"): lambda n: n.startswith("llama-index-responses-"),
    ("llama-index-llms-openai 0.8.3", "`OpenAI`"): lambda n: n.startswith("llama-index-chat-"),
    ("haystack-ai 3.4.1", "`OpenAIResponsesChatGenerator`"): lambda n: n.startswith("haystack-responses-"),
    ("haystack-ai 3.4.1", "`OpenAIChatGenerator`"): lambda n: n.startswith("haystack-chat-"),
    ("anthropic 2.16.0", "`messages`, as the SDK sends it (no `temperature`)"): lambda n: (
        n.startswith("anthropic-") and n.endswith("-default")
    ),
    ("anthropic 2.16.0", '`messages`, `extra_body={"temperature": 0}`'): lambda n: (
        n.startswith("anthropic-") and n.endswith("temperature0")
    ),
}


def test_the_client_table_is_what_each_client_s_captured_requests_reach():
    """docs/matching.md's client table, each cell the one recording all that client's captured
    text (or tool) requests reach, unselected."""
    from mockllama.matching.matcher import Matcher
    from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios
    from support.client_requests import CLIENT_REQUESTS

    matcher = Matcher(load_scenarios([bundled_cassette_dir()]))
    fresh = []
    for (client, api), chosen in CLIENT_ROWS.items():
        cells = []
        for kind in ("-text", "-tool"):
            reached = {
                matcher.select("POST", request.path, request.body.encode()).interaction.scenario
                for name, request in CLIENT_REQUESTS.items()
                if chosen(name) and request.turn == 1 and kind in name
            }
            assert len(reached) == 1, (client, api, kind, reached)
            cells.append(f"`{reached.pop()}`")
        fresh.append(f"| {client} | {api} | {' | '.join(cells)} |")
    text = (DOCS / "matching.md").read_text(encoding="utf-8")
    start = text.index(CLIENTS_HEAD + "\n| --- |")
    rows = text[start:].split("\n\n")[0].splitlines()[2:]
    assert rows == fresh, "the rows as the recordings have them:\n" + "\n".join(fresh)
