"""The README's journal examples, as written there (RECORDED_500_REQUEST comes from the recordings)."""

from __future__ import annotations

import openai
import pytest

from mockllama.cassettes import bundled_cassette_dir, load_scenarios

RECORDED_500_REQUEST = next(i.request_json for i in load_scenarios([bundled_cassette_dir()])["errors"].interactions
                            if i.status == 500)


def test_the_sdk_retries_a_server_error_twice(mockllama, mockllama_journal):
    client = openai.OpenAI(base_url=mockllama.base_url("buggy"), api_key="unused")
    with pytest.raises(openai.InternalServerError):   # llama-server's own recorded 500
        client.chat.completions.create(**RECORDED_500_REQUEST)
    assert [entry.status for entry in mockllama_journal] == [500, 500, 500]


def test_my_client_asked_for_the_limit_it_meant(mockllama, mockllama_journal):
    client = openai.OpenAI(base_url=mockllama.base_url("fixed"), api_key="unused")
    client.responses.create(model="x", input="Count from 1 to 200, separated by spaces.",
                            max_output_tokens=8, temperature=0)
    (sent,) = mockllama_journal.where(path="/fixed/v1/responses")
    assert sent.scenario == "text-cut-8" and sent.body["max_output_tokens"] == 8
