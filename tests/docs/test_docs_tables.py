"""The tables on the docs pages that the recordings answer for: every bundled scenario has its row
in the scenario tables (whose columns scripts/regenerate makes from the recordings, see
tests/support/generated_docs.py), and the client table says which recording each client's
captured requests reach.
"""

from __future__ import annotations

import pytest

from support.docs_pages import DOCS, README
from support.generated_docs import recorded_scenarios, scenario_names, scenario_row, scenario_tables

PAGES = [README, DOCS / "scenarios.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_recorded_scenario_has_one_row(page):
    text = page.read_text(encoding="utf-8")
    rows = [row for table in scenario_tables(text) for row in table]
    assert rows, f"{page.name} has no scenario table"
    named = [name for row in rows for name in scenario_names(row)]
    recorded = recorded_scenarios()
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
        scenario_row("| `a`, `b` | 1 | x | y | z | cut |", recorded)
        == "| `a`, `b` | 8, 16 | completed | incomplete | length | cut |"
    )
    assert scenario_row("| `m` | 8 | | | | messages |", recorded) == "| `m` | | | | | messages |"


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
