"""Choosing the behaviour (prefix > header > default) and the scenario (explicit > match > fallback)."""

from __future__ import annotations

import json

import openai

from support.httpkit import post_json

SEED = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0}


def _status_and_behaviour(url, path, headers=None):
    status, response_headers, body = post_json(url, path, SEED, headers)
    assert status == 200
    return json.loads(body)["status"], response_headers["X-Mockllama-Behaviour"]


def test_path_prefix_beats_header(server):
    assert _status_and_behaviour(server.url, "/buggy/v1/responses", {"X-Mockllama-Behaviour": "fixed"}) == (
        "completed",
        "buggy",
    )
    assert _status_and_behaviour(server.url, "/fixed/v1/responses", {"X-Mockllama-Behaviour": "buggy"}) == (
        "incomplete",
        "fixed",
    )


def test_header_beats_server_default(start_server):
    default_fixed = start_server(behaviour="fixed")
    assert _status_and_behaviour(default_fixed.url, "/v1/responses") == ("incomplete", "fixed")
    assert _status_and_behaviour(default_fixed.url, "/v1/responses", {"X-Mockllama-Behaviour": "buggy"}) == (
        "completed",
        "buggy",
    )


def test_default_is_buggy(server):
    assert _status_and_behaviour(server.url, "/v1/responses") == ("completed", "buggy")


def test_unknown_behaviour_header_is_a_400(server):
    status, _, body = post_json(server.url, "/v1/responses", SEED, {"X-Mockllama-Behaviour": "strict"})
    assert status == 400
    assert "buggy, fixed" in json.loads(body)["error"]["message"]


def test_scenario_header_selects_whatever_the_prompt(server):
    client = openai.OpenAI(base_url=server.base_url("fixed"), api_key="unused")
    response = client.responses.create(
        model="x", input="Something never recorded", extra_headers={"X-Mockllama-Scenario": "tool-cut-20"}
    )
    assert response.output[0].type == "function_call"
    assert response.output[0].arguments == '{"path": "/tmp/hello.txt'
    assert response.status == "incomplete"


def test_model_naming_a_scenario_selects_it(server):
    client = openai.OpenAI(base_url=server.base_url("buggy"), api_key="unused")
    completion = client.chat.completions.create(
        model="text-cut-8", messages=[{"role": "user", "content": "anything at all"}]
    )
    assert completion.choices[0].finish_reason == "length"
    raw = client.responses.with_raw_response.create(model="text-exact-limit", input="anything")
    assert raw.headers["X-Mockllama-Scenario"] == "text-exact-limit"
    assert raw.headers["X-Mockllama-Selected-By"] == "model"


def test_header_naming_a_scenario_without_that_endpoint_says_what_it_records(server):
    status, _, body = post_json(
        server.url, "/v1/messages", {"model": "x", "messages": []}, {"X-Mockllama-Scenario": "text-cut-8"}
    )
    assert status == 404
    message = json.loads(body)["error"]["message"]
    assert "text-cut-8" in message and "POST /v1/responses" in message


def test_fallback_answers_what_matches_nothing(start_server):
    with_fallback = start_server(fallback="text-cut-8")
    status, headers, body = post_json(with_fallback.url, "/fixed/v1/responses", {"model": "x", "input": "new"})
    assert status == 200
    assert headers["X-Mockllama-Scenario"] == "text-cut-8"
    assert headers["X-Mockllama-Selected-By"] == "fallback"
    assert json.loads(body)["status"] == "incomplete"


def test_get_routes_come_from_the_server_info_recording(server, scenarios):
    client = openai.OpenAI(base_url=server.base_url("fixed"), api_key="unused")
    assert [model.id for model in client.models.list()] == ["SmolLM2-135M-Instruct-Q4_1"]
    status, headers, body = post_json(server.url, "/health", {})
    assert status == 405
