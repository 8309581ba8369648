"""spec against the Open Responses specification: its vendored OpenAPI document, by JSON Schema."""

from __future__ import annotations

import copy
import hashlib

import pytest

from support.openresponses_schema import DOCUMENT, DOCUMENT_PATH, EVENT_SCHEMAS, SCHEMAS, event_errors, response_errors
from support.recordings import SCENARIOS, replayed_responses

RESPONSE_SCENARIOS = sorted(name for name, s in SCENARIOS.items() if s.find("POST", "/v1/responses", True))
# The one conflict with openai 3.57.0 (docs/behaviours.md, "The spec behaviour"): spec names the reasoning text
# events as the SDK's types do; the document names the same events differently.
NAMED_AS_THE_SDK_NAMES_THEM = {
    "response.reasoning_text.delta": "response.reasoning.delta",
    "response.reasoning_text.done": "response.reasoning.done",
}


def _as_the_document_names_it(data: dict) -> dict:
    return {**data, "type": NAMED_AS_THE_SDK_NAMES_THEM.get(data["type"], data["type"])}


def test_the_vendored_document_is_the_one_the_readme_names():
    readme = (DOCUMENT_PATH.parent / "README.md").read_text(encoding="utf-8")
    assert hashlib.sha256(DOCUMENT_PATH.read_bytes()).hexdigest() in readme
    assert f"`{DOCUMENT['info']['version']}`" in readme
    assert (DOCUMENT_PATH.parent / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")


@pytest.mark.parametrize("name", RESPONSE_SCENARIOS)
def test_every_spec_body_is_a_response_resource(server, name):
    assert response_errors(replayed_responses(server, "spec", name, False)) == []


@pytest.mark.parametrize("name", RESPONSE_SCENARIOS)
def test_every_spec_event_and_the_response_inside_it_follow_the_document(server, name):
    pairs = replayed_responses(server, "spec", name, True)
    for event, data in pairs:
        assert event_errors(_as_the_document_names_it(data)) == [], event
        if "response" in data:
            assert response_errors(data["response"]) == [], event
    kinds = {data["type"] for _, data in pairs}
    assert {"response.created", "response.in_progress", "response.output_item.done"} <= kinds


def test_every_event_type_spec_sends_has_a_schema_in_the_document(server):
    sent = {data["type"] for name in RESPONSE_SCENARIOS for _, data in replayed_responses(server, "spec", name, True)}
    assert sent - NAMED_AS_THE_SDK_NAMES_THEM.keys() <= EVENT_SCHEMAS.keys()
    assert set(NAMED_AS_THE_SDK_NAMES_THEM.values()) <= EVENT_SCHEMAS.keys()
    assert {"response.incomplete", "response.function_call_arguments.done", "response.output_text.delta"} <= sent


@pytest.mark.parametrize("behaviour", ["buggy", "fixed"])
def test_the_schemas_reject_what_llama_server_sends(server, behaviour):
    """The checks have teeth: llama-server's own bodies and events fail them, as the issue found."""
    errors = response_errors(replayed_responses(server, behaviour, "text-finishes", False))
    for field in ("previous_response_id", "truncation", "text", "store", "metadata"):
        assert f"(root): '{field}' is a required property" in errors
    created = replayed_responses(server, behaviour, "text-cut-8", True)[0][1]
    assert event_errors(created)


def test_each_required_field_of_a_spec_body_is_checked(server):
    body = replayed_responses(server, "spec", "tool-finishes", False)
    for field in SCHEMAS["ResponseResource"]["required"]:
        broken = {key: value for key, value in body.items() if key != field}
        assert response_errors(broken) == [f"(root): '{field}' is a required property"], field
    no_strict = copy.deepcopy(body)
    del no_strict["tools"][0]["strict"]
    assert response_errors(no_strict), "a function tool without strict must fail"
    assert response_errors({**body, "top_p": None}), "top_p: null must fail"


def test_an_unknown_event_type_is_an_error():
    assert event_errors({"type": "response.made_up", "sequence_number": 0}) != []
