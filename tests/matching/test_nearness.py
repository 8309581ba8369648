"""The 404's fast weigher (``nearness``) agrees with ``differences``, which words the 404:
on every pair of real recorded requests, and on requests edited the ways a client's differ."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllama.matching.differences import compared_form, count_of, differences, weight
from mockllama.matching.fingerprint import parts_of
from mockllama.matching.matcher import Matcher
from mockllama.matching.nearness import Fingerprints, fewest
from mockllama.matching.pipeline import match_keys
from mockllama.recordings.cassettes import load_scenarios
from mockllama.wire.errors import RequestError
from support import ROOT

BUNDLED = ROOT / "cassettes" / "llama-server-b11434"
# Every bundled set but the sweeps, whose hundreds of positions differ from each other only by the limit.
SCENARIOS = {
    name: scenario
    for name, scenario in load_scenarios([path for path in sorted(BUNDLED.iterdir()) if path.is_dir()]).items()
    if scenario.sweep is None
}
REQUESTS = [
    (i.path, i.request_json)
    for s in SCENARIOS.values()
    for i in s.interactions
    if i.method == "POST" and isinstance(i.request_json, dict)
]


def _count(path: str, sent: dict, recorded: dict) -> int:
    """nearness's count of how ``sent`` differs from ``recorded``."""
    return fewest(parts_of(compared_form(path, sent)), [("recorded", parts_of(compared_form(path, recorded)))])[0]


def test_the_weight_is_the_differences_weight_for_every_pair_of_recorded_requests():
    assert len(REQUESTS) > 100  # every bundled set: stock, forced-thinking, multi-item, server errors
    pairs = 0
    for path, sent in REQUESTS:
        for other_path, recorded in REQUESTS:
            if other_path == path:
                assert _count(path, sent, recorded) == weight(differences(path, sent, recorded)), (sent, recorded)
                pairs += 1
    assert pairs > 3000


def _edits():
    """Edits a client's request makes to a recorded one: a field dropped, changed or added, a
    message's text changed, a message dropped or added, a tool schema's keys reordered, a list
    sent as a string."""
    return st.lists(st.sampled_from(["drop", "change", "add", "text", "pop", "push", "reorder", "flatten"]), max_size=4)


def _edited(body: dict, edits: list[str], salt: int) -> dict:
    body = copy.deepcopy(body)
    listed = "input" if "input" in body else "messages"
    for edit in edits:
        keys = sorted(body)
        if edit == "drop" and keys:
            body.pop(keys[salt % len(keys)])
        elif edit == "change" and keys:
            body[keys[salt % len(keys)]] = salt
        elif edit == "add":
            body[f"extra_{salt}"] = [salt]
        elif edit == "text" and isinstance(body.get(listed), list) and body[listed]:
            item = body[listed][salt % len(body[listed])]
            if isinstance(item, dict) and "content" in item:
                item["content"] = f"another text {salt}"
        elif edit == "pop" and isinstance(body.get(listed), list) and body[listed]:
            body[listed].pop()
        elif edit == "push" and isinstance(body.get(listed), list):
            body[listed].append({"role": "user", "content": f"one more {salt}"})
        elif edit == "reorder" and isinstance(body.get("tools"), list) and body["tools"]:
            tool = body["tools"][0]
            schema = (tool.get("function") or tool).get("parameters", {}).get("properties")
            if isinstance(schema, dict):
                schema_items = list(schema.items())[::-1]
                schema.clear()
                schema.update(schema_items)
        elif edit == "flatten" and listed in body:
            body[listed] = json.dumps(body[listed])
    return body


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(REQUESTS) - 1), st.integers(0, len(REQUESTS) - 1), _edits(), st.integers(0, 50))
def test_the_weight_is_the_differences_weight_for_edited_requests(first, second, edits, salt):
    path, recorded = REQUESTS[first]
    other_path, other = REQUESTS[second]
    for sent in (_edited(recorded, edits, salt), _edited(other if other_path == path else recorded, edits, salt)):
        assert _count(path, sent, recorded) == weight(differences(path, sent, recorded)), (sent, recorded)
        assert _count(path, recorded, sent) == weight(differences(path, recorded, sent)), (recorded, sent)


def test_equal_parts_are_one_object_across_recordings_read_together(tmp_path, monkeypatch):
    """The loader shares equal parts (cassettes.BATCH at a time), and the index keeps them shared:
    what makes the 404's pricing by identity price each distinct part about once."""
    monkeypatch.setenv("MOCKLLAMA_INDEX_DIR", str(tmp_path / "index"))
    for _ in ("read", "from the index"):
        scenarios = load_scenarios([path for path in sorted(BUNDLED.iterdir()) if path.is_dir()], keys_of=match_keys)
        responses = [
            i
            for s in scenarios.values()
            for i in s.interactions
            if i.path == "/v1/responses" and not i.stream and isinstance(i.request_json, dict)
        ]
        made = Fingerprints().of(("POST", "/v1/responses", False), lambda responses=responses: responses)
        parts = [part for _, recorded in made for part in recorded]
        assert len(made.parts) == len({id(part) for part in parts}) < len(parts) / 2
        assert {id(part) for part in parts} == set(made.parts)


def test_a_route_s_candidates_are_kept_for_the_next_miss():
    fingerprints = Fingerprints()
    responses = [
        i
        for s in SCENARIOS.values()
        for i in s.interactions
        if i.path == "/v1/responses" and isinstance(i.request_json, dict)
    ]
    made = fingerprints.of(("POST", "/v1/responses", False), lambda: responses)
    assert fingerprints.of(("POST", "/v1/responses", False), lambda: []) is made


def test_a_404_names_the_same_nearest_scenarios_as_comparing_every_recording():
    matcher = Matcher(dict(SCENARIOS))
    path, recorded = next((p, b) for p, b in REQUESTS if p == "/v1/responses" and not b.get("stream"))
    sent = {**recorded, "input": "A prompt that no recording holds.", "max_output_tokens": 7}
    try:
        matcher.select("POST", path, json.dumps(sent).encode())
        raise AssertionError("expected a 404")
    except RequestError as err:
        message = str(err)
    # the served set-up's recordings (the default one): another set-up's answer only by name
    candidates = {
        (i.scenario, i.turn): i
        for s in SCENARIOS.values()
        if s.setup == matcher.setup
        for i in s.interactions
        if i.path == path and not i.stream and isinstance(i.request_json, dict) and i.status < 400
    }
    counted = {key: weight(differences(path, sent, i.request_json)) for key, i in candidates.items()}
    fewest_count = min(counted.values())
    nearest_names = [name for (name, _), count in counted.items() if count == fewest_count]
    assert f"{count_of(fewest_count)} difference" in message
    assert len(nearest_names) == 1 or f"Nearest scenarios ({len(nearest_names)}, equally near" in message
    listed = [name for name in nearest_names if f"'{name}':" in message]
    assert len(listed) == min(len(nearest_names), 10)
    others = [name for (name, _), count in counted.items() if count > fewest_count]
    assert not any(f"'{name}':" in message for name in others)


def test_each_recording_s_parts_are_those_of_its_own_compared_form():
    """match_keys reuses the parts of a compared form it has just seen (the same request in another
    cassette): the parts it gives are still each recording's own, a Responses request's and its chat
    twin's each in their own words."""
    for scenario in SCENARIOS.values():
        for interaction in scenario.interactions:
            form = compared_form(interaction.path, interaction.request_json)
            keys = match_keys(interaction)
            assert keys is None or keys[3] == (parts_of(form) if isinstance(form, dict) else None)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_JSON | st.dictionaries(st.text(), _JSON, max_size=4), max_size=3),
    st.dictionaries(st.integers() | st.booleans() | st.none(), _JSON, max_size=3),
)
def test_an_item_s_text_is_its_json_whatever_its_keys(messages, odd_keys):
    """An object's text is put together from its keys' texts; one whose keys are not strings (a
    body vcrpy kept as a YAML mapping) is encoded whole, as json.dumps writes it."""
    for items in (messages, [odd_keys]):
        parts = parts_of({"messages": items})
        texts = [text for kind, _, text, _ in parts[1:] if kind == "item"]
        assert texts == [json.dumps(item) for item in items]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=500, deadline=None)
@given(JSON_VALUES)
def test_a_part_s_text_is_what_json_writes_for_it(value):
    from mockllama.matching.fingerprint import _json

    assert _json(value) == json.JSONEncoder().encode(value) == json.dumps(value)
