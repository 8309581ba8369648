"""A directory of many recordings (the bench's synthetic copies): each copy is its own scenario,
and a miss names a bounded number of the equally near ones while counting them all."""

from __future__ import annotations

import json

import pytest

from benchmarks.scale import make_cassette_dir, matched_request, unmatched_request
from mockllama.matching.matcher import MAX_LISTED, Matcher
from mockllama.recordings.cassettes import load_scenarios
from mockllama.wire.errors import RequestError


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    directory = make_cassette_dir(tmp_path_factory.mktemp("many"), 300)
    return directory, Matcher(load_scenarios([directory]))


def test_every_copy_is_a_scenario_of_its_own_that_matches_its_own_request(many):
    directory, matcher = many
    assert len(matcher.scenarios) == 300
    first = matched_request(directory)
    chosen = matcher.select("POST", "/v1/responses", first).interaction
    number = chosen.scenario.rsplit("-", 1)[1]
    assert chosen.scenario.startswith("text-cut-8-")
    assert json.loads(first)["input"].endswith(f"(SYNTH{number})")


def test_a_miss_lists_at_most_the_bound_and_counts_the_rest(many):
    directory, matcher = many
    with pytest.raises(RequestError) as raised:
        matcher.select("POST", "/v1/responses", unmatched_request(matched_request(directory)))
    message = raised.value.message
    near = int(message.split("Nearest scenarios (")[1].split(",")[0])
    assert near > MAX_LISTED
    assert message.count('sent "A prompt that no recording holds."') == MAX_LISTED
    assert f"and {near - MAX_LISTED} more as near" in message
