"""Client tests written the way a client author would: only the plugin's fixtures, no manual server.

The plugin comes in through its pytest11 entry point; nothing here or in conftest imports it.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import openai

from mockllama.behaviours.registry import BEHAVIOURS

COUNT = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0}


def test_base_url_runs_once_per_behaviour(mockllama_base_url, mockllama):
    behaviour = urlsplit(mockllama_base_url).path.split("/")[1]
    assert mockllama_base_url == f"{mockllama.url}/{behaviour}/v1"
    assert behaviour in BEHAVIOURS


def test_sync_openai_client_sees_the_behaviours_truth(mockllama_base_url):
    client = openai.OpenAI(base_url=mockllama_base_url, api_key="unused")
    raw = client.responses.with_raw_response.create(**COUNT)
    response = raw.parse()
    behaviour = raw.headers["X-Mockllama-Behaviour"]
    assert mockllama_base_url.endswith(f"/{behaviour}/v1")
    assert response.status == ("completed" if behaviour == "buggy" else "incomplete")
    assert response.output_text == "1. 1\n2. "


def test_async_openai_client_works_too(mockllama_base_url):
    async def ask():
        async with openai.AsyncOpenAI(base_url=mockllama_base_url, api_key="unused") as client:
            return await client.chat.completions.create(
                model="x", messages=[{"role": "user", "content": COUNT["input"]}], max_tokens=8, temperature=0
            )

    completion = asyncio.run(ask())
    assert completion.choices[0].finish_reason == "length"  # chat is honest in every behaviour


def test_fixture_exposes_url_and_scenarios(mockllama):
    assert mockllama.url.startswith("http://127.0.0.1:")
    assert {"text-cut-8", "tool-cut-20", "text-exact-limit"} <= set(mockllama.scenarios)
    assert mockllama.base_url("spec") == f"{mockllama.url}/spec/v1"


def test_one_server_serves_the_whole_session(mockllama, request):
    assert request.session.config.pluginmanager.has_plugin("mockllama")  # loaded by its entry point
    client = openai.OpenAI(base_url=mockllama.base_url("fixed"), api_key="unused")
    cut = client.responses.create(model="tool-cut-20", input="anything")
    assert cut.status == "incomplete"
    assert cut.output[0].arguments == '{"path": "/tmp/hello.txt'


def test_journal_fixture_shows_only_this_tests_requests(mockllama, mockllama_journal):
    assert len(mockllama.journal) > 0  # earlier tests in this session used the same server ...
    assert list(mockllama_journal) == []  # ... but this test has sent nothing yet
    client = openai.OpenAI(base_url=mockllama.base_url("fixed"), api_key="unused", max_retries=0)
    client.responses.create(**COUNT)
    client.chat.completions.create(
        model="x", messages=[{"role": "user", "content": COUNT["input"]}], max_tokens=8, temperature=0
    )
    assert [(e.path, e.scenario, e.status) for e in mockllama_journal] == [
        ("/fixed/v1/responses", "text-cut-8", 200),
        ("/fixed/v1/chat/completions", "text-cut-8", 200),
    ]
    assert mockllama_journal[0].body["max_output_tokens"] == 8
    assert mockllama_journal.last.body["max_tokens"] == 8
    assert len(mockllama_journal.where(path="/fixed/v1/responses")) == 1
    assert mockllama.journal[-2:] == mockllama_journal.entries  # the session journal, as objects
    assert mockllama.requests == mockllama.journal


def test_where_rejects_a_field_entries_do_not_have(mockllama_journal):
    import pytest

    with pytest.raises(TypeError, match="no field colour"):
        mockllama_journal.where(colour="red")


# --- mockllama_variant_url: one test, once per way a server reports a cut reply ---------------

# Which servers' cut replies a client that trusts "completed" takes as finished: (the status of a
# body, the terminal event of a stream). From each server's source (docs/variants.md).
FOOLS_A_CLIENT_THAT_TRUSTS_COMPLETED = {
    "buggy": (True, True),
    "fixed": (False, False),
    "spec": (False, False),
    "aimock": (False, True),  # "incomplete", but the stream still ends response.completed
    "inspect-ai": (False, True),  # status null, and the stream says "completed" around the reason
    "localai": (True, True),
    "ollama": (True, True),
    "sglang": (True, True),
    "vllm": (False, True),  # "incomplete", but the stream still ends response.completed
    "litellm": (False, False),  # honest on status and terminal event: its cut function call says "completed"
    "lmstudio": (True, True),  # its Responses side is llama-server's (only its chat side is its own)
}


def test_variant_url_runs_once_per_way_a_server_reports_a_cut(mockllama_variant_url, mockllama):
    behaviour = urlsplit(mockllama_variant_url).path.split("/")[1]
    assert mockllama_variant_url == f"{mockllama.url}/{behaviour}/v1"
    assert behaviour in FOOLS_A_CLIENT_THAT_TRUSTS_COMPLETED


def test_the_table_names_every_behaviour_the_variant_fixture_runs():
    from mockllama.pytest_plugin.session import variant_url_behaviours

    assert sorted(FOOLS_A_CLIENT_THAT_TRUSTS_COMPLETED) == sorted(variant_url_behaviours())


def test_a_client_that_trusts_completed_is_fooled_by_every_variant_but_the_honest_ones(mockllama_variant_url):
    client = openai.OpenAI(base_url=mockllama_variant_url, api_key="unused", max_retries=0)
    raw = client.responses.with_raw_response.create(**COUNT)
    behaviour = raw.headers["X-Mockllama-Behaviour"]
    *_, last = client.responses.create(**COUNT, stream=True)
    fooled = (raw.parse().status == "completed", last.type == "response.completed")
    assert fooled == FOOLS_A_CLIENT_THAT_TRUSTS_COMPLETED[behaviour]
    assert any(fooled) is (behaviour not in ("fixed", "spec", "litellm"))
