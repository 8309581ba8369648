"""The recordings from llama-server built with the project's fix (cassettes-patched/), and
`fixed` held against them: what mockllama derives from the stock recording against what the
corrected server really sent to the same request. The live tier repeats this on a fresh build."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from mockllama import check
from mockllama.app import create_app
from mockllama.behaviours.replay import reply_for
from mockllama.recordings.cassettes import load_scenarios, patched_cassette_dir
from mockllama.recordings.catalogue import load_catalogue
from mockllama.server.background import BackgroundServer
from mockllama.wire.routes import RESPONSES_PATH
from support import ROOT
from support.recordings import SCENARIOS as STOCK
from support.responses_view import responses_view

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
PATCH = ROOT / "patches" / "llama-server-responses-incomplete.patch"
LOADED = load_scenarios([patched_cassette_dir()])
# The sweeps' positions are held to the stock ones in tests/recordings/test_sweep_positions.py.
PATCHED = {name: scenario for name, scenario in LOADED.items() if scenario.sweep is None}
PROVENANCES = {
    path.parent.name: json.loads(path.read_text()) for path in patched_cassette_dir().rglob("provenance.json")
}
CATALOGUES = {
    "smollm2-135m-instruct-q4_1": "default",
    "smollm2-135m-forced-thinking": "forced-thinking",
    "smollm2-135m-instruct-q4_1-clients": "clients",
    "smollm2-135m-instruct-q4_1-sweeps": "sweeps",
    "smollm2-135m-forced-thinking-sweeps": "forced-thinking-sweeps",
}


def _responses(scenario, stream: bool):
    interaction = scenario.find("POST", RESPONSES_PATH, stream)
    return interaction if interaction is not None and interaction.status == 200 else None


# The patched set was recorded from the default, forced-thinking and clients catalogues; the stock set's
# other catalogues (server errors, multi-item) have no patched recording to compare with.
CASES = [(name, stream) for name in sorted(PATCHED) for stream in (False, True) if _responses(STOCK[name], stream)]


def _pair(name: str, stream: bool):
    return _responses(STOCK[name], stream), _responses(PATCHED[name], stream)


def test_the_patched_set_names_the_patch_and_the_server_it_came_from():
    assert set(PROVENANCES) == set(CATALOGUES)
    for directory, provenance in PROVENANCES.items():
        patch = {"file": PATCH.name, "sha256": hashlib.sha256(PATCH.read_bytes()).hexdigest()}
        assert provenance["server_patch"] == patch
        assert "llama-server-b11434-patched-" in provenance["server_command"]
        assert provenance["catalogue"] == CATALOGUES[directory]
    assert PROVENANCES["smollm2-135m-forced-thinking"]["setup"] == "smollm2-135m-forced-thinking"
    assert PROVENANCES["smollm2-135m-forced-thinking-sweeps"]["setup"] == "smollm2-135m-forced-thinking"
    # Recorded from the default, forced-thinking and clients catalogues, as the stock set was (the stock set
    # also holds the server-error recordings, which come from another catalogue).
    entries = [entry for catalogue in CATALOGUES.values() for entry in load_catalogue(catalogue)]
    assert set(PATCHED) == {entry.name for entry in entries if entry.sweep is None}
    assert {s.sweep for s in LOADED.values() if s.sweep} == {entry.name for entry in entries if entry.sweep}
    assert set(PATCHED) <= set(STOCK)


def test_every_responses_scenario_is_compared_streamed_and_not():
    assert len(CASES) == 60 and len({name for name, _ in CASES}) == 30


def _reasoning_status_filled(value):
    """The patched server's reply as fixed would finish it: the patch sets the status of a *cut*
    item, but (as stock llama-server does) it streams a finished reasoning item with no status at
    all, which fixed fills in as "completed"."""
    if isinstance(value, dict):
        filled = {key: _reasoning_status_filled(item) for key, item in value.items()}
        if filled.get("type") == "reasoning" and "status" not in filled:
            filled["status"] = "completed"
        return filled
    if isinstance(value, list):
        return [_reasoning_status_filled(item) for item in value]
    return value


def test_the_patched_server_streams_a_finished_reasoning_item_without_a_status():
    """The one thing fixed adds to the patched server's replies (see _reasoning_status_filled)."""
    patched = _responses(PATCHED["thinking-finishes"], True)
    done = [e.json()["item"] for e in patched.events if e.name == "response.output_item.done"]
    assert [item["type"] for item in done] == ["reasoning"] and "status" not in done[0]
    assert json.loads(_responses(PATCHED["thinking-finishes"], False).body)["output"][0]["status"] == "completed"


@pytest.mark.parametrize(("name", "stream"), CASES)
def test_fixed_agrees_with_what_the_patched_server_sent(name, stream):
    stock, patched = _pair(name, stream)
    assert patched.request_json == stock.request_json
    expected = responses_view(reply_for("fixed", stock, STOCK[name]).body)
    assert responses_view(_filled_body(patched)) == expected


def _filled_body(interaction) -> bytes:
    if not interaction.is_event_stream:
        return json.dumps(_reasoning_status_filled(interaction.body_json)).encode()
    return b"".join(
        f"event: {e.name}\ndata: {json.dumps(_reasoning_status_filled(e.json()))}\n\n".encode()
        for e in interaction.events
    )


@pytest.mark.parametrize(("name", "stream"), CASES)
def test_the_patched_server_says_incomplete_exactly_when_its_chat_twin_says_length(name, stream):
    _, patched = _pair(name, stream)
    view = responses_view(patched.body)
    cut = PATCHED[name].twin_finish_reason(patched) == "length"
    assert view["status"] == ("incomplete" if cut else "completed")
    assert view["incomplete_details"] == ({"reason": "max_output_tokens"} if cut else None)
    if stream:
        assert view["event lines"][-1] == ("response.incomplete" if cut else "response.completed")
        calls = [item for item in view["items"] if item[0] == "function_call"]
        assert len(view["arguments.done"]) == len(calls)


@pytest.mark.parametrize(("name", "stream"), CASES)
def test_fixed_leaves_a_corrected_servers_reply_as_it_was(name, stream):
    """No second arguments.done, no status changed: fixed on the patched set is the recording."""
    _, patched = _pair(name, stream)
    reply = reply_for("fixed", patched, PATCHED[name])
    if stream:
        assert [e.json() for e in reply.events] == [_reasoning_status_filled(e.json()) for e in patched.events]
    else:
        assert json.loads(reply.body) == json.loads(patched.body)


@pytest.mark.parametrize(("name", "stream"), CASES)
def test_spec_on_the_patched_set_parses_strictly_as_the_sdk_types(name, stream):
    _, patched = _pair(name, stream)
    reply = reply_for("spec", patched, PATCHED[name])
    if stream:
        events = [TypeAdapter(ResponseStreamEvent).validate_python(e.json(), strict=True) for e in reply.events]
        assert [e.type for e in events] == [e.name for e in reply.events]
    else:
        Response.model_validate(json.loads(reply.body), strict=True)


def test_scenarios_lists_the_patched_recordings():
    result = subprocess.run(
        [*MOCKLLAMA, "scenarios", "--recordings", "patched", "--json"], capture_output=True, text=True, check=True
    )
    rows = {row["name"]: row for row in map(json.loads, result.stdout.splitlines())}
    assert rows["text-cut-8"]["responses_status"] == "incomplete"
    assert rows["text-finishes"]["responses_status"] == "completed"
    assert "cassettes-patched" in rows["text-cut-8"]["source"] or "_patched_cassettes" in rows["text-cut-8"]["source"]


def test_recordings_and_cassettes_together_are_refused(tmp_path):
    result = subprocess.run(
        [*MOCKLLAMA, "serve", "--recordings", "patched", "--cassettes", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "--recordings patched and --cassettes both choose the recordings: use one." in result.stderr
    assert "Traceback" not in result.stderr


def test_check_passes_against_the_patched_recordings_in_both_directions():
    """The corrected server's own replies, as it sent them (buggy replays the served recordings):
    every cut reply reported as cut, every reply with room to finish as finished. The live tier
    runs the same check against a fresh build."""
    with BackgroundServer(create_app(PATCHED)) as patched:
        report = check.run(f"{patched.url}/buggy", probes=["all"])
    assert report.exit_code == 0, report.summary
    assert [(probe.finished.scenario, probe.finished.verdict) for probe in report.probes] == [
        ("text-finishes", "honest"),
        ("tool-finishes", "honest"),
        ("text-finishes", "honest"),
        ("tool-finishes", "honest"),
    ] * 2  # /v1/responses, then /v1/chat/completions
    assert {path: endpoint.verdict for path, endpoint in report.endpoints.items()} == {
        "/v1/responses": "honest",
        "/v1/chat/completions": "honest",
    }
