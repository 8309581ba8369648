"""One server set-up per matching pool: recordings answer ordinary requests only from the set-up served.

The forced-thinking recordings were recorded from a llama-server started with another chat template
(provenance.json names the set-up): the stock server answers the same prompt with a message, so
matching them by prompt would give a reply that the user's server never sends."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from httpkit import post_json

from mockllama.recordings.cassettes import DEFAULT_SETUP, bundled_cassette_dir, load_scenarios, setup_of

FORCED = "smollm2-135m-forced-thinking"
# The request: the prompt and limit of thinking-finishes, which only the forced-thinking set-up recorded.
COUNT_TO_200 = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 400,
                "temperature": 0}


def _provenance_setups() -> dict[str, str]:
    """Each bundled scenario's set-up, read from the provenance.json files themselves."""
    found = {}
    for provenance in bundled_cassette_dir().rglob("provenance.json"):
        setup = json.loads(provenance.read_text()).get("setup") or DEFAULT_SETUP
        for cassette in provenance.parent.glob("*.yaml"):
            found[cassette.stem] = setup
    return found


def test_each_recording_knows_the_set_up_it_came_from():
    expected = _provenance_setups()
    assert {name: s.setup for name, s in load_scenarios([bundled_cassette_dir()]).items()} == expected
    assert sorted(name for name, setup in expected.items() if setup == FORCED) == [
        "messages-thinking-cut-12", "thinking-cut-12", "thinking-cut-32", "thinking-finishes"]


def test_a_recording_of_another_set_up_does_not_answer_by_prompt(server):
    status, headers, body = post_json(server.url, "/v1/responses", COUNT_TO_200)
    assert (status, headers["X-Mockllama-Scenario"]) == (404, "none")
    message = json.loads(body)["error"]["message"]
    assert (f"A recording of another server set-up matches: 'thinking-finishes', recorded from the set-up "
            f"'{FORCED}' (served: 'default').") in message
    assert f"serve that set-up with --setup {FORCED}." in message


@pytest.mark.parametrize("behaviour", ["buggy", "fixed", "spec"])
def test_it_is_still_reached_by_name(server, behaviour):
    status, headers, body = post_json(server.url, f"/{behaviour}/v1/responses", {**COUNT_TO_200, "model": "thinking-finishes"})
    assert (status, headers["X-Mockllama-Scenario"]) == (200, "thinking-finishes")
    assert [item["type"] for item in json.loads(body)["output"]] == ["reasoning"]


def test_serving_that_set_up_answers_its_prompts_and_not_the_default_ones(start_server):
    forced = start_server(setup=FORCED)
    status, headers, _ = post_json(forced.url, "/v1/responses", COUNT_TO_200)
    assert (status, headers["X-Mockllama-Scenario"], headers["X-Mockllama-Selected-By"]) == (
        200, "thinking-finishes", "match")
    seed = {**COUNT_TO_200, "max_output_tokens": 8}  # text-cut-8, of the default set-up
    status, _, body = post_json(forced.url, "/v1/responses", seed)
    assert status == 404 and "'text-cut-8', recorded from the set-up 'default'" in json.loads(body)["error"]["message"]


def test_an_unknown_set_up_is_refused_at_start():
    result = subprocess.run([sys.executable, "-m", "mockllama", "serve", "--port", "0", "--setup", "no-such-setup"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "no loaded recording is of the set-up 'no-such-setup'; loaded: default, smollm2-135m-forced-thinking" in (
        " ".join(result.stderr.split()))


def test_scenarios_shows_each_set_up():
    result = subprocess.run([sys.executable, "-m", "mockllama", "scenarios", "--json"], capture_output=True,
                            text=True, timeout=60, check=True)
    rows = {row["name"]: row["setup"] for row in map(json.loads, result.stdout.splitlines())}
    assert rows == _provenance_setups()
    table = subprocess.run([sys.executable, "-m", "mockllama", "scenarios"], capture_output=True, text=True,
                           timeout=60, check=True).stdout.splitlines()
    assert "setup" in table[0].split()
    assert any(line.split()[0] == "thinking-cut-12" and FORCED in line.split() for line in table)


def test_the_teaching_page_data_carries_each_set_up(server):
    from httpkit import call
    stories = json.loads(call(server.url, "GET", "/_mockllama/scenarios.json")[2])
    assert {story["name"]: story["setup"] for story in stories} == _provenance_setups()


@pytest.mark.parametrize("content", [b"not json", b"[1, 2]", b'{"setup": 7}', b'{"setup": "' + b"x" * 101 + b'"}',
                                     b"{" * 100000])
def test_a_provenance_file_that_names_no_usable_set_up_is_the_default(tmp_path, content):
    """provenance.json is untrusted input like the cassettes: nothing in it can stop a load."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "provenance.json").write_bytes(content)
    assert setup_of(tmp_path / "sub", tmp_path, {}) == DEFAULT_SETUP
    (tmp_path / "sub" / "provenance.json").write_text(json.dumps({"setup": "mine"}))
    assert setup_of(tmp_path / "sub", tmp_path, {}) == "mine"
