"""The forced-thinking recordings (a reply cut while the model thinks) in every behaviour."""

from __future__ import annotations

import hashlib
import json

import openai
import pytest
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from mockllama.recordings.cassettes import bundled_cassette_dir
from mockllama.recordings.catalogue import load_catalogue, load_setup
from support.httpkit import call, request_bytes
from support.recordings import SCENARIOS, chosen, replayed_responses

CUT = ["thinking-cut-12", "thinking-cut-32"]
STREAM_EVENT = TypeAdapter(ResponseStreamEvent)
SET = bundled_cassette_dir() / "llama-server-b11434" / "smollm2-135m-forced-thinking"


def test_the_forced_thinking_set_has_provenance_naming_the_template():
    provenance = json.loads((SET / "provenance.json").read_text())
    setup = load_setup("forced-thinking")
    assert provenance["setup"] == setup["name"] == "smollm2-135m-forced-thinking"
    assert provenance["chat_template_file"] == "Qwen-QwQ-32B.jinja" in provenance["server_command"]
    assert provenance["chat_template_file_sha256"] == setup["chat_template_sha256"]
    assert "not trained to think" in provenance["note"] and provenance["recorded_by"].endswith("(mockllama record)")
    assert sorted(provenance["scenarios"]) == sorted(e.name for e in load_catalogue("forced-thinking"))
    assert all(SCENARIOS[name].source.parent == SET for name in provenance["scenarios"])


@pytest.mark.parametrize("name", CUT)
def test_buggy_says_completed_with_an_empty_output_text_and_the_twin_says_length(server, name):
    request = dict(SCENARIOS[name].find("POST", "/v1/responses", False).request_json)
    client = openai.OpenAI(base_url=server.base_url("buggy"), api_key="unused", default_headers=chosen(name))
    response = client.responses.create(**request)
    assert response.status == "completed" and response.output_text == ""
    assert [item.type for item in response.output] == ["reasoning"] and response.output[0].content[0].text
    twin = SCENARIOS[name].chat_twin(SCENARIOS[name].find("POST", "/v1/responses", False)).body_json
    assert twin["choices"][0]["finish_reason"] == "length"
    assert twin["choices"][0]["message"]["content"] == "" and twin["choices"][0]["message"]["reasoning_content"]


@pytest.mark.parametrize("behaviour", ["fixed", "spec"])
@pytest.mark.parametrize("name", CUT)
def test_the_cut_reasoning_item_and_the_response_are_incomplete(server, behaviour, name):
    body = replayed_responses(server, behaviour, name, False)
    assert body["status"] == "incomplete" and body["incomplete_details"] == {"reason": "max_output_tokens"}
    assert body["output"][-1]["type"] == "reasoning" and body["output"][-1]["status"] == "incomplete"
    pairs = replayed_responses(server, behaviour, name, True)
    kinds = [event for event, _ in pairs]
    assert kinds[-1] == "response.incomplete" and "response.completed" not in kinds
    done = [data for event, data in pairs if event == "response.output_item.done"]
    assert done[-1]["item"]["type"] == "reasoning" and done[-1]["item"]["status"] == "incomplete"
    assert pairs[-1][1]["response"]["output"][-1]["status"] == "incomplete"


@pytest.mark.parametrize("behaviour", ["fixed", "spec"])
def test_a_reasoning_reply_that_finished_stays_completed(server, behaviour):
    assert (
        SCENARIOS["thinking-finishes"].twin_finish_reason(
            SCENARIOS["thinking-finishes"].find("POST", "/v1/responses", False)
        )
        == "stop"
    )
    body = replayed_responses(server, behaviour, "thinking-finishes", False)
    assert body["status"] == "completed" and body["incomplete_details"] is None
    assert replayed_responses(server, behaviour, "thinking-finishes", True)[-1][0] == "response.completed"


@pytest.mark.parametrize("name", [*CUT, "thinking-finishes"])
def test_spec_frames_reasoning_text_as_the_openai_format_does(server, name):
    pairs = replayed_responses(server, "spec", name, True)
    kinds = [event for event, _ in pairs]
    deltas = [data for event, data in pairs if event == "response.reasoning_text.delta"]
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds[4 : 4 + len(deltas)] == ["response.reasoning_text.delta"] * len(deltas)
    assert kinds[4 + len(deltas) :] == [
        "response.reasoning_text.done",
        "response.content_part.done",
        "response.output_item.done",
        kinds[-1],
    ]
    text = "".join(d["delta"] for d in deltas)
    by_kind = dict(pairs)
    assert by_kind["response.reasoning_text.done"]["text"] == text
    assert by_kind["response.content_part.done"]["part"] == {"type": "reasoning_text", "text": text}
    assert by_kind["response.content_part.added"]["part"] == {"type": "reasoning_text", "text": ""}
    assert by_kind["response.output_item.done"]["item"]["content"][0]["text"] == text
    for event, data in pairs:
        parsed = STREAM_EVENT.validate_python(data, strict=True)
        assert parsed.type == event and not parsed.model_extra
        if "item_id" in data:
            assert (data["output_index"], data.get("content_index", 0)) == (0, 0)
    assert [data["sequence_number"] for _, data in pairs] == list(range(len(pairs)))


def test_messages_thinking_cut_is_replayed_as_recorded_in_every_behaviour(server):
    interaction = SCENARIOS["messages-thinking-cut-12"].find("POST", "/v1/messages", False)
    for behaviour in ("buggy", "fixed", "spec"):
        status, _, body = call(
            server.url, "POST", f"/{behaviour}/v1/messages", request_bytes(interaction), chosen(interaction)
        )
        assert status == 200 and body == interaction.body
    body = interaction.body_json
    assert body["stop_reason"] == "max_tokens" and [c["type"] for c in body["content"]] == ["thinking"]


def test_the_setup_sha256_is_the_template_files_and_props_drops_its_final_newline():
    """What require_setup relies on, pinned by the recording: /props serves the template without
    the file's last newline, so its hash differs from the file's by exactly that newline."""
    provenance = json.loads((SET / "provenance.json").read_text())
    assert provenance["chat_template_sha256"] != provenance["chat_template_file_sha256"]
    assert len(hashlib.sha256(b"").hexdigest()) == len(provenance["chat_template_file_sha256"])
