"""spec's response objects echo the request that was sent; generation results stay the recording's."""

from __future__ import annotations

import json
import math

import openai
import pytest
from openai.types.responses import Response

from mockllama.behaviours.echo import DEFAULTS, SAMPLING_DEFAULTS
from support.httpkit import call, post_json, request_bytes, sse_pairs
from support.openresponses_schema import event_errors, response_errors
from support.recordings import SCENARIOS

CUT = SCENARIOS["text-cut-8"]
TOOL = SCENARIOS["tool-finishes"].find("POST", "/v1/responses", False).request_json["tools"][0]
SELECT = {"X-Mockllama-Scenario": "text-cut-8"}

# parameter -> (value sent, value the response object must say)
ECHOES = {
    "max_output_tokens": (500, 500),
    "temperature": (0.7, 0.7),
    "top_p": (0.5, 0.5),
    "tools": ([TOOL], [{**TOOL, "strict": True}]),
    "tool_choice": ("none", "none"),
    "parallel_tool_calls": (False, False),
    "instructions": ("Answer briefly.", "Answer briefly."),
    "previous_response_id": ("resp_earlier", "resp_earlier"),
    "metadata": ({"run": "42"}, {"run": "42"}),
    "store": (True, True),
    "truncation": ("auto", "auto"),
    "text": ({"verbosity": "low"}, {"format": {"type": "text"}, "verbosity": "low"}),
    "reasoning": ({"effort": "low"}, {"effort": "low", "summary": None}),
    "presence_penalty": (0.5, 0.5),
    "frequency_penalty": (0.25, 0.25),
    "top_logprobs": (3, 3),
    "max_tool_calls": (2, 2),
    "background": (True, True),
    "service_tier": ("flex", "flex"),
    "safety_identifier": ("user-1", "user-1"),
    "prompt_cache_key": ("cache-1", "cache-1"),
}


def _request(stream: bool, **changes) -> dict:
    return {**CUT.find("POST", "/v1/responses", stream).request_json, **changes}


def _response_objects(server, behaviour, sent, headers=SELECT):
    """Every response object in the reply: the body, or each one a stream event carries."""
    status, _, body = post_json(server.url, f"/{behaviour}/v1/responses", sent, headers)
    assert status == 200, body
    if not sent.get("stream"):
        return [json.loads(body)]
    return [data["response"] for _, data in sse_pairs(body) if isinstance(data, dict) and "response" in data]


def test_every_settable_field_of_the_document_has_an_echo_test():
    assert ECHOES.keys() == DEFAULTS.keys()


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("parameter", sorted(ECHOES))
def test_each_parameter_is_echoed(server, parameter, stream):
    sent, expected = ECHOES[parameter]
    objects = _response_objects(server, "spec", _request(stream, **{parameter: sent}))
    assert len(objects) == (3 if stream else 1)  # created, in_progress and the terminal event
    for response in objects:
        assert response[parameter] == expected
        assert response_errors(response) == []
        Response.model_validate(response, strict=True)


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_what_was_generated_stays_the_recording(server, stream):
    sent = _request(stream, **{name: value for name, (value, _) in ECHOES.items()})
    echoed = _response_objects(server, "spec", sent)[-1]
    recorded = _response_objects(server, "spec", _request(stream))[-1]
    for field in ("id", "created_at", "completed_at", "status", "incomplete_details", "model", "output", "usage"):
        assert echoed[field] == recorded[field], field
    assert {name: echoed[name] for name in ECHOES} == {name: want for name, (_, want) in ECHOES.items()}


def test_stream_events_other_than_response_objects_are_untouched(server):
    sent = _request(True, temperature=0.7, metadata={"run": "1"})
    _, _, echoed = post_json(server.url, "/spec/v1/responses", sent, SELECT)
    _, _, recorded = call(
        server.url, "POST", "/spec/v1/responses", request_bytes(CUT.find("POST", "/v1/responses", True))
    )
    echoed, recorded = sse_pairs(echoed), sse_pairs(recorded)
    assert [e for e, _ in echoed] == [e for e, _ in recorded]
    for (event, echoed_data), (_, recorded_data) in zip(echoed, recorded):
        assert event_errors(echoed_data) == []
        if "response" not in echoed_data:
            assert echoed_data == recorded_data, event


def test_defaults_fill_only_what_was_not_sent(server):
    """A request naming the scenario and nothing else: every setting is the documented default."""
    response = _response_objects(server, "spec", {"model": "text-cut-8", "input": "anything"}, {})[0]
    assert {name: response[name] for name in DEFAULTS} == DEFAULTS
    assert response_errors(response) == []
    nulls = _response_objects(server, "spec", _request(False, temperature=None, top_p=None, text=None))[0]
    assert (nulls["temperature"], nulls["top_p"], nulls["text"]) == (
        DEFAULTS["temperature"],
        DEFAULTS["top_p"],
        DEFAULTS["text"],
    )


def test_sampling_defaults_are_the_ones_llama_server_reports():
    """The defaults a spec object reports are what the recorded llama-server's /props says it uses."""
    props = SCENARIOS["server-info"].find("GET", "/props", False).body_json["default_generation_settings"]["params"]
    recorded = {
        "temperature": props["temperature"],
        "top_p": props["top_p"],
        "presence_penalty": props["presence_penalty"],
        "frequency_penalty": props["frequency_penalty"],
        "top_logprobs": props["n_probs"],
    }
    assert recorded.keys() == SAMPLING_DEFAULTS.keys()
    for name, value in SAMPLING_DEFAULTS.items():
        assert math.isclose(value, recorded[name], abs_tol=1e-6), name  # /props reports float32 values


@pytest.mark.parametrize("behaviour", ["buggy", "fixed"])
def test_buggy_and_fixed_echo_nothing(server, behaviour):
    recorded = CUT.find("POST", "/v1/responses", False)
    _, _, as_recorded = call(server.url, "POST", f"/{behaviour}/v1/responses", request_bytes(recorded))
    _, _, other = post_json(server.url, f"/{behaviour}/v1/responses", _request(False, temperature=0.7), SELECT)
    assert other == as_recorded


def test_the_issue_example_with_the_openai_sdk(server):
    """text-cut-8 with max_output_tokens 500, temperature 0.7, tool_choice none, a tool and a previous id."""
    client = openai.OpenAI(base_url=server.base_url("spec"), api_key="unused")
    response = client.responses.create(
        model="text-cut-8",
        input="Count from 1 to 200, separated by spaces.",
        max_output_tokens=500,
        temperature=0.7,
        tool_choice="none",
        tools=[TOOL],
        previous_response_id="resp_earlier",
    )
    assert (response.max_output_tokens, response.temperature, response.tool_choice) == (500, 0.7, "none")
    assert [(t.name, t.strict) for t in response.tools] == [("write_file", True)]
    assert response.previous_response_id == "resp_earlier"
    assert response.status == "incomplete" and response.output_text == "1. 1\n2. "
    assert response.usage.output_tokens == 8  # generation results stay the recording's


def test_echo_with_a_streamed_sdk_request(server):
    client = openai.OpenAI(base_url=server.base_url("spec"), api_key="unused")
    with client.responses.create(
        model="text-cut-8", input="x", stream=True, temperature=0.3, metadata={"who": "sdk"}
    ) as stream:
        events = list(stream)
    for event in (events[0], events[1], events[-1]):
        assert (event.response.temperature, event.response.metadata) == (0.3, {"who": "sdk"})
    assert events[-1].type == "response.incomplete"
