"""The matching rules docs/matching.md states, each checked against a real recording and its contrary."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllama.app import create_app
from mockllama.recordings.cassettes import load_scenarios
from mockllama.recordings.sweeps import sweep_of_file
from mockllama.server.background import BackgroundServer
from support import yamlkit
from support.httpkit import call, post_json

SEED = yamlkit.find("text-cut-8", "/v1/responses", False).request


def _selected(server, body, path="/v1/responses", headers=None):
    status, response_headers, reply = post_json(server.url, path, body, headers)
    return status, response_headers.get("X-Mockllama-Scenario"), response_headers.get("X-Mockllama-Selected-By"), reply


def test_the_recorded_request_itself_is_selected_by_match(server):
    assert _selected(server, SEED)[:3] == (200, "text-cut-8", "match")


def test_zero_and_zero_point_zero_are_the_same_number(server):
    assert SEED["temperature"] == 0 and isinstance(SEED["temperature"], int)
    sent = json.dumps({**SEED, "temperature": 0.0}).encode()
    assert b'"temperature": 0.0' in sent
    status, headers, _ = call(server.url, "POST", "/v1/responses", sent)
    assert (status, headers["X-Mockllama-Scenario"], headers["X-Mockllama-Selected-By"]) == (200, "text-cut-8", "match")
    assert _selected(server, {**SEED, "temperature": 0.5})[0] == 404  # a different number still differs


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("model", "some-other-model"),
        ("stream_options", {"include_usage": True}),
        ("user", "user-1234"),
        ("metadata", {"run": "42", "suite": "client-tests"}),
    ],
)
def test_fields_llama_server_ignores_are_ignored(server, field, value):
    assert _selected(server, {**SEED, field: value})[:3] == (200, "text-cut-8", "match")


def test_all_ignored_fields_at_once_and_a_field_that_counts(server):
    everything = {**SEED, "model": "m", "stream_options": {"include_usage": True}, "user": "u", "metadata": {"a": "b"}}
    assert _selected(server, everything)[:3] == (200, "text-cut-8", "match")
    assert _selected(server, {**everything, "max_output_tokens": 9})[0] == 404


def test_selected_by_header(server):
    status, scenario, how, _ = _selected(
        server, {"model": "x", "input": "never recorded"}, headers={"X-Mockllama-Scenario": "tool-cut-20"}
    )
    assert (status, scenario, how) == (200, "tool-cut-20", "header")
    status, headers, _ = call(server.url, "GET", "/health", headers={"X-Mockllama-Scenario": "server-info"})
    assert (status, headers["X-Mockllama-Scenario"], headers["X-Mockllama-Selected-By"]) == (
        200,
        "server-info",
        "header",
    )


def test_selected_by_recorded_bytes(server):
    """A body that is not JSON, recorded byte for byte in `errors`, gets llama-server's own reply."""
    recorded = next(
        r for r in yamlkit.read("errors") if r.path == "/v1/chat/completions" and isinstance(r.request, str)
    )
    status, headers, body = call(server.url, "POST", "/v1/chat/completions", recorded.request.encode())
    assert (status, body.decode()) == (recorded.status, recorded.body)
    assert (headers["X-Mockllama-Scenario"], headers["X-Mockllama-Selected-By"]) == ("errors", "recorded-bytes")


@pytest.mark.parametrize("path", ["/health", "/v1/models", "/props"])
def test_selected_by_route(server, path):
    recorded = next(r for r in yamlkit.read("server-info") if r.path == path)
    status, headers, body = call(server.url, "GET", path)
    assert (status, body.decode()) == (recorded.status, recorded.body)
    assert (headers["X-Mockllama-Scenario"], headers["X-Mockllama-Selected-By"]) == ("server-info", "route")


def test_an_unknown_scenario_header_is_a_404_that_lists_every_scenario(server):
    """The known names are the bundled cassette files' own names, read from the directory."""
    files = yamlkit.CASSETTE_DIR.rglob("*.yaml")
    known = ", ".join(sorted(path.stem for path in files if sweep_of_file(path) is None))  # the server: no sweeps
    status, _, how, reply = _selected(server, SEED, headers={"X-Mockllama-Scenario": "no-such-scenario"})
    assert (status, how) == (404, None)
    assert json.loads(reply)["error"] == {
        "code": 404,
        "type": "not_found_error",
        "message": f"mockllama: no scenario named 'no-such-scenario' (from X-Mockllama-Scenario). Known: {known}.",
    }


@pytest.mark.parametrize(
    ("name", "near"),
    [
        ("poem-cut-16", "'poem-cut-30' or 'poem-cut-20'"),
        ("text-cut", "'text-cut-8' or 'text-cut-64' or 'text-cut-16'"),
        ("tool-finish", "'tool-finishes'"),
    ],
)
def test_a_scenario_header_that_is_almost_a_name_says_did_you_mean(server, name, near):
    status, _, _, reply = _selected(server, SEED, headers={"X-Mockllama-Scenario": name})
    assert status == 404
    assert (
        f"no scenario named '{name}' (from X-Mockllama-Scenario). Did you mean {near}? Known: "
        in (json.loads(reply)["error"]["message"])
    )


def test_a_model_that_is_almost_a_scenario_name_says_did_you_mean(server):
    """poem-cut-16 is a typo for poem-cut-20 or poem-cut-30: not a name, so matched by prompt, and missed."""
    status, _, _, reply = _selected(server, {**SEED, "model": "poem-cut-16", "max_output_tokens": 17})
    message = json.loads(reply)["error"]["message"]
    assert status == 404
    assert (
        "The model 'poem-cut-16' names no scenario, so the request was matched by its prompt. "
        "Did you mean 'poem-cut-30' or 'poem-cut-20'?"
    ) in message


@pytest.mark.parametrize("model", ["gpt-4o-mini", "x", "SmolLM2-135M-Instruct-Q4_1", "text"])
def test_an_ordinary_model_name_gets_no_did_you_mean(server, model):
    status, _, _, reply = _selected(server, {**SEED, "model": model, "max_output_tokens": 9})
    assert status == 404 and "Did you mean" not in json.loads(reply)["error"]["message"]


def _replies(count: int, name: str = "tool-conversation") -> list:
    """The recorded conversation's question followed by ``count`` pairs of ``name``'s own recorded call
    (only a scenario's own replies count as its turns) and an answer to it."""
    turn_2 = next(
        r.request
        for r in yamlkit.read("tool-conversation")
        if r.path == "/v1/responses"
        and not r.stream
        and any(item.get("type") == "function_call" for item in r.request["input"])
    )
    question = [item for item in turn_2["input"] if item.get("type") not in ("function_call", "function_call_output")]
    call = next(
        item
        for r in yamlkit.read(name)
        if r.path == "/v1/responses" and not r.stream
        for item in json.loads(r.body)["output"]
        if item["type"] == "function_call"
    )
    pair = [call, {"type": "function_call_output", "call_id": call["call_id"], "output": "done"}]
    return question + pair * count


@pytest.mark.parametrize(("chosen_by", "replies"), [("header", 2), ("model", 2), ("fallback", 2), ("header", 1)])
def test_past_the_last_turn_says_who_chose_the_scenario_and_counts_the_replies(start_server, chosen_by, replies):
    """tool-conversation records 2 turns; a request with N model replies asks for turn N + 1."""
    name = "tool-conversation" if replies == 2 else "tool-cut-20"
    server = start_server(fallback=name) if chosen_by == "fallback" else start_server()
    body = {"model": name if chosen_by == "model" else "x", "input": _replies(replies, name)}
    headers = {"X-Mockllama-Scenario": name} if chosen_by == "header" else None
    status, _, how, reply = _selected(server, body, headers=headers)
    assert (status, how) == (404, None)
    who = {"header": "X-Mockllama-Scenario", "model": "model", "fallback": "--fallback"}[chosen_by]
    turns = sum(1 for r in yamlkit.read(name) if r.path == "/v1/responses" and not r.stream)  # one reply a turn
    assert turns == replies
    said = "1 model reply" if replies == 1 else f"{replies} model replies"
    assert json.loads(reply)["error"]["message"] == (
        f"mockllama: scenario '{name}' (chosen by {who}) records {turns} turn{'s' if turns != 1 else ''}, but this "
        f"request carries {said} (function calls or assistant messages), so it asks for turn {replies + 1}. "
        f"mockllama never replays an earlier turn for a later one. Stop the conversation after turn {turns}, "
        'or record a longer conversation (a catalogue entry with "turns").'
    )


def _reordered_properties(request: dict) -> dict:
    """The same request with the tool's `parameters` properties in the opposite order."""
    tools = json.loads(json.dumps(request["tools"]))
    properties = tools[0]["parameters"]["properties"]
    tools[0]["parameters"]["properties"] = dict(reversed(list(properties.items())))
    assert list(tools[0]["parameters"]["properties"]) != list(properties)
    return {**request, "tools": tools}


@pytest.mark.parametrize("stored_as", ["string", "mapping"])
def test_key_order_counts_unless_the_recording_lost_it(tmp_path, stored_as):
    """tool-cut-20's recording, its request body kept as the string sent (as `mockllama record`
    stores it) or as a YAML mapping (as vcrpy stores a `json=` body, its order lost): only against
    the mapping is the same request with its tool's properties reordered the recorded one."""
    data = yaml.safe_load(yamlkit.cassette_path("tool-cut-20").read_text(encoding="utf-8"))
    request = yamlkit.find("tool-cut-20", "/v1/responses", False).request
    if stored_as == "mapping":
        for interaction in data["interactions"]:
            body = interaction["request"]["body"]
            if isinstance(body, str) and body.startswith("{"):
                interaction["request"]["body"] = json.loads(body)
    (tmp_path / "tool-cut-20.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with BackgroundServer(create_app(load_scenarios([tmp_path]))) as server:
        assert _selected(server, request)[:3] == (200, "tool-cut-20", "match")
        status, scenario, how, _ = _selected(server, _reordered_properties(request))
    assert (status, scenario, how) == ((200, "tool-cut-20", "match") if stored_as == "mapping" else (404, "none", None))


def test_did_you_mean_names_the_three_nearest_at_most():
    """Five names one character from the one asked for: the three nearest are named, no more."""
    from pathlib import Path

    from mockllama.matching.matcher import Matcher
    from mockllama.recordings.cassettes import Scenario
    from mockllama.wire.errors import RequestError

    names = ["case-1", "case-2", "case-3", "case-4", "case-5"]
    matcher = Matcher({name: Scenario(name=name, source=Path(f"{name}.yaml")) for name in names})
    with pytest.raises(RequestError) as refused:
        matcher.select("POST", "/v1/responses", json.dumps(SEED).encode(), "case-0")
    suggested = refused.value.message.split("Did you mean ", 1)[1].split("?", 1)[0]
    assert len(suggested.split(" or ")) == 3 and set(suggested.replace("'", "").split(" or ")) < set(names)


def test_a_recording_replaced_under_its_name_counts_its_own_replies_from_then_on():
    """Matcher.add (record on a miss) replaces a scenario: its replies, not the old one's, are its turns."""
    from mockllama.matching.matcher import Matcher
    from mockllama.recordings.cassettes import bundled_cassette_dir, load_cassette
    from mockllama.wire.errors import RequestError

    def renamed(name):
        scenario = load_cassette(next(bundled_cassette_dir().rglob(f"{name}.yaml")))
        scenario.name = "mine"
        for interaction in scenario.interactions:
            interaction.scenario = "mine"
        return scenario

    def later_turn(scenario):
        call = next(i for i in scenario.interactions if i.path == "/v1/responses" and not i.stream).body_json
        call = call["output"][0]
        items = [
            {"role": "user", "content": "Write it."},
            call,
            {"type": "function_call_output", "call_id": call["call_id"], "output": "done"},
        ]
        return json.dumps({"model": "x", "input": items}).encode()

    first, second = renamed("tool-cut-20"), renamed("tool-cut-30")
    matcher = Matcher({"mine": first})
    with pytest.raises(RequestError, match="asks for turn 2"):
        matcher.select("POST", "/v1/responses", later_turn(first), "mine")
    matcher.add(second)
    with pytest.raises(RequestError, match="asks for turn 2"):  # tool-cut-30's own call, now the scenario's
        matcher.select("POST", "/v1/responses", later_turn(second), "mine")
    assert matcher.select("POST", "/v1/responses", later_turn(first), "mine").turn == 1  # no longer its own


_NAMES = st.text(alphabet="ab-1", max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(_NAMES, min_size=1, max_size=30, unique=True), _NAMES)
def test_the_names_suggested_are_difflib_s_own_from_every_scenario(names, asked):
    """Names are handed to difflib only where their length alone could pass its cut-off: what it
    suggests is what it suggests from every name."""
    import difflib
    from pathlib import Path

    from mockllama.matching.matcher import NEAR_NAME, Matcher
    from mockllama.recordings.cassettes import Scenario

    matcher = Matcher({name: Scenario(name=name, source=Path(f"{name or 'x'}.yaml")) for name in names})
    expected = difflib.get_close_matches(asked, names, n=3, cutoff=NEAR_NAME)
    assert matcher._did_you_mean(asked) == (
        f" Did you mean {' or '.join(repr(name) for name in expected)}?" if expected else ""
    )
