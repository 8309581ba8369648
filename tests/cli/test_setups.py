"""One server set-up per matching pool: recordings answer ordinary requests only from the set-up served.

The forced-thinking recordings were recorded from a llama-server started with another chat template
(provenance.json names the set-up): the stock server answers the same prompt with a message, so
matching them by prompt would give a reply that the user's server never sends."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mockllama.recordings.cassettes import DEFAULT_SETUP, bundled_cassette_dir, load_scenarios, setup_of
from mockllama.recordings.sweeps import sweep_of_file
from support.httpkit import post_json
from support.recordings import SCENARIOS

FORCED = "smollm2-135m-forced-thinking"
# The request: the prompt and limit of thinking-finishes, which only the forced-thinking set-up recorded.
COUNT_TO_200 = {
    "model": "x",
    "input": "Count from 1 to 200, separated by spaces.",
    "max_output_tokens": 400,
    "temperature": 0,
}


def _provenance_setups() -> dict[str, str]:
    """Each bundled scenario's set-up, read from the provenance.json files themselves."""
    found = {}
    for provenance in bundled_cassette_dir().rglob("provenance.json"):
        setup = json.loads(provenance.read_text()).get("setup") or DEFAULT_SETUP
        for cassette in provenance.parent.glob("*.yaml"):
            found[sweep_of_file(cassette) or cassette.stem] = setup  # a sweep by its name, once
    return found


def test_each_recording_knows_the_set_up_it_came_from():
    expected = _provenance_setups()
    assert {s.sweep or name: s.setup for name, s in load_scenarios([bundled_cassette_dir()]).items()} == expected
    assert sorted(name for name, setup in expected.items() if setup == FORCED) == [
        "messages-thinking-cut-12",
        "thinking",
        "thinking-cut-12",
        "thinking-cut-32",
        "thinking-finishes",
    ]


def test_a_recording_of_another_set_up_does_not_answer_by_prompt(server):
    status, headers, body = post_json(server.url, "/v1/responses", COUNT_TO_200)
    assert (status, headers["X-Mockllama-Scenario"]) == (404, "none")
    message = json.loads(body)["error"]["message"]
    assert (
        f"A recording of another server set-up matches: 'thinking-finishes', recorded from the set-up "
        f"'{FORCED}' (served: 'default')."
    ) in message
    assert f"serve that set-up with --setup {FORCED}." in message


@pytest.mark.parametrize("behaviour", ["buggy", "fixed", "spec"])
def test_it_is_still_reached_by_name(server, behaviour):
    status, headers, body = post_json(
        server.url, f"/{behaviour}/v1/responses", {**COUNT_TO_200, "model": "thinking-finishes"}
    )
    assert (status, headers["X-Mockllama-Scenario"]) == (200, "thinking-finishes")
    assert [item["type"] for item in json.loads(body)["output"]] == ["reasoning"]


def test_serving_that_set_up_answers_its_prompts_and_not_the_default_ones(start_server):
    forced = start_server(setup=FORCED)
    status, headers, _ = post_json(forced.url, "/v1/responses", COUNT_TO_200)
    assert (status, headers["X-Mockllama-Scenario"], headers["X-Mockllama-Selected-By"]) == (
        200,
        "thinking-finishes",
        "match",
    )
    seed = {**COUNT_TO_200, "max_output_tokens": 8}  # text-cut-8, of the default set-up
    status, _, body = post_json(forced.url, "/v1/responses", seed)
    assert status == 404 and "'text-cut-8', recorded from the set-up 'default'" in json.loads(body)["error"]["message"]


def test_an_unknown_set_up_is_refused_at_start():
    result = subprocess.run(
        [sys.executable, "-m", "mockllama", "serve", "--port", "0", "--setup", "no-such-setup"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "no loaded recording is of the set-up 'no-such-setup'; loaded: default, smollm2-135m-forced-thinking" in (
        " ".join(result.stderr.split())
    )


def test_scenarios_shows_each_set_up():
    result = subprocess.run(
        [sys.executable, "-m", "mockllama", "scenarios", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    rows = {row["sweep"] or row["name"]: row["setup"] for row in map(json.loads, result.stdout.splitlines())}
    assert rows == _provenance_setups()
    table = subprocess.run(
        [sys.executable, "-m", "mockllama", "scenarios"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()
    assert "setup" in table[0].split()
    assert any(line.split()[0] == "thinking-cut-12" and FORCED in line.split() for line in table)


def test_the_teaching_page_data_carries_each_set_up(server):
    from support.httpkit import call

    stories = json.loads(call(server.url, "GET", "/_mockllama/scenarios.json")[2])
    served = {name: setup for name, setup in _provenance_setups().items() if name in SCENARIOS}  # sweeps apart
    assert {story["name"]: story["setup"] for story in stories} == served


@pytest.mark.parametrize(
    "content", [b"not json", b"[1, 2]", b'{"setup": 7}', b'{"setup": "' + b"x" * 101 + b'"}', b"{" * 100000]
)
def test_a_provenance_file_that_names_no_usable_set_up_is_the_default(tmp_path, content):
    """provenance.json is untrusted input like the cassettes: nothing in it can stop a load."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "provenance.json").write_bytes(content)
    assert setup_of(tmp_path / "sub", tmp_path, {}) == DEFAULT_SETUP
    (tmp_path / "sub" / "provenance.json").write_text(json.dumps({"setup": "mine"}))
    assert setup_of(tmp_path / "sub", tmp_path, {}) == "mine"


# --- the served set-up, chosen among the loaded ones -------------------------------------------------


def _scenario(name: str, setup: str):
    from pathlib import Path

    from mockllama.recordings.cassettes import Scenario

    return Scenario(name=name, source=Path(f"{name}.yaml"), setup=setup)


@pytest.mark.parametrize(
    ("setups", "asked", "served"),
    [
        ((DEFAULT_SETUP, FORCED), None, DEFAULT_SETUP),  # the default one when it is loaded
        ((FORCED, "zeta"), None, FORCED),  # else the first loaded, by name
        (("zeta", FORCED), None, FORCED),
        ((), None, DEFAULT_SETUP),  # nothing loaded yet (serve --upstream): the default
        ((DEFAULT_SETUP, FORCED), FORCED, FORCED),  # asked for
        ((), FORCED, FORCED),  # asked for before anything is recorded
    ],
)
def test_the_served_set_up(setups, asked, served):
    from mockllama.matching.matcher import served_setup

    scenarios = {f"s{n}": _scenario(f"s{n}", setup) for n, setup in enumerate(setups)}
    assert served_setup(scenarios, asked) == served


def test_a_set_up_not_loaded_is_refused_naming_those_that_are():
    from mockllama.matching.matcher import served_setup

    with pytest.raises(ValueError, match=r"no loaded recording is of the set-up 'x'; loaded: default, zeta$"):
        served_setup({"a": _scenario("a", "zeta"), "b": _scenario("b", DEFAULT_SETUP)}, "x")


def test_a_streamed_request_of_another_set_up_is_pointed_at_too(server):
    status, _, body = post_json(server.url, "/v1/responses", {**COUNT_TO_200, "stream": True})
    assert (
        status == 404 and "another server set-up matches: 'thinking-finishes'" in json.loads(body)["error"]["message"]
    )


def test_a_404_that_no_other_set_up_matches_says_nothing_of_set_ups(server):
    status, _, body = post_json(server.url, "/v1/responses", {**COUNT_TO_200, "max_output_tokens": 401})
    message = json.loads(body)["error"]["message"]
    assert status == 404 and "set-up" not in message
    assert message.startswith(
        "mockllama: no recording matches this POST /v1/responses request (stream=false), "
        "compared as llama-server sees it (see 'Which requests match' in the docs, "
        "docs/matching.md). Nearest scenario"
    )


def _server_info_in(directory, setup: str | None):
    """server-info.yaml (the GET routes' recordings) in ``directory``, of ``setup``."""
    import shutil

    directory.mkdir(parents=True)
    source = next(bundled_cassette_dir().rglob("server-info.yaml"))
    shutil.copy(source, directory / f"server-info-{setup or 'default'}.yaml")
    if setup is not None:
        (directory / "provenance.json").write_text(json.dumps({"setup": setup}))


@pytest.mark.parametrize("setup", [None, FORCED])
def test_the_get_routes_answer_from_the_served_set_up_first(tmp_path, setup):
    from mockllama.app import ServeOptions, create_app
    from mockllama.server.background import BackgroundServer
    from support.httpkit import call

    _server_info_in(tmp_path / "a", None)
    _server_info_in(tmp_path / "b", FORCED)
    with BackgroundServer(create_app(load_scenarios([tmp_path]), ServeOptions(setup=setup))) as running:
        status, headers, _ = call(running.url, "GET", "/props")
    assert (status, headers["X-Mockllama-Scenario"]) == (200, f"server-info-{setup or 'default'}")


def test_a_get_route_only_another_set_up_records_still_answers(tmp_path):
    from mockllama.app import create_app
    from mockllama.server.background import BackgroundServer
    from support.httpkit import call

    _server_info_in(tmp_path / "b", FORCED)
    text_cut = next(bundled_cassette_dir().rglob("text-cut-8.yaml"))
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "text-cut-8.yaml").write_bytes(text_cut.read_bytes())
    with BackgroundServer(create_app(load_scenarios([tmp_path]))) as running:
        status, headers, _ = call(running.url, "GET", "/v1/models")
    assert (status, headers["X-Mockllama-Scenario"]) == (200, f"server-info-{FORCED}")
