"""The cassette loader's reading and validation (mockllama.recordings.cassettes), on real recordings.

Each cassette here is a bundled recording (read with PyYAML, not with mockllama) written to a
temporary directory, with one thing changed; the expected values are read from the same YAML.
A cassette directory is untrusted input: every refusal is a CassetteError naming the file and
saying what is wrong, never another exception.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mockllama.recordings.cassettes import CassetteError, cassette_files, load_cassette, load_scenarios
from mockllama.wire.nesting import MAX_JSON_DEPTH
from support import yamlkit


def _recording(name: str) -> dict:
    return yaml.safe_load(yamlkit.cassette_path(name).read_text(encoding="utf-8"))


def _write(directory: Path, name: str, data: dict, suffix: str = ".yaml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}{suffix}"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    assert caught.value.path == path
    assert str(caught.value) == f"cannot load cassette {path}: {caught.value.reason}"
    return caught.value.reason


def test_an_unchanged_recording_loads_with_every_field_as_in_the_yaml(tmp_path):
    data = _recording("text-cut-8")
    scenario = load_cassette(_write(tmp_path, "renamed-here", data))
    assert scenario.name == "renamed-here"  # the file's name, not the recording's
    assert len(scenario.interactions) == len(data["interactions"])
    for interaction, recorded in zip(scenario.interactions, data["interactions"], strict=True):
        request, response = recorded["request"], recorded["response"]
        assert interaction.method == request["method"]
        assert interaction.path == "/" + request["uri"].split("/", 3)[3].split("?")[0]
        assert interaction.status == response["status"]["code"]
        assert interaction.reason == response["status"]["message"]
        assert interaction.body == response["body"]["string"].encode("utf-8")
        assert dict(interaction.headers) == {k: v[0] for k, v in response["headers"].items()}
        assert interaction.scenario == "renamed-here"


def test_a_string_request_body_keeps_its_bytes_and_a_mapping_body_has_none(tmp_path):
    data = _recording("text-cut-8")
    first = data["interactions"][0]["request"]
    body = first["body"] if isinstance(first["body"], str) else json.dumps(first["body"])
    as_string = {"interactions": [{**data["interactions"][0], "request": {**first, "body": body}}], "version": 1}
    as_mapping = {
        "interactions": [{**data["interactions"][0], "request": {**first, "body": json.loads(body)}}],
        "version": 1,
    }
    (from_string,) = load_cassette(_write(tmp_path, "s", as_string)).interactions
    (from_mapping,) = load_cassette(_write(tmp_path, "m", as_mapping)).interactions
    assert from_string.request_raw == body.encode("utf-8")
    assert from_string.request_json == from_mapping.request_json == json.loads(body)
    assert from_mapping.request_raw is None


def test_a_body_that_is_not_json_is_kept_as_bytes_without_json(tmp_path):
    errors = _recording("errors")
    raw = [
        i
        for i in errors["interactions"]
        if isinstance(i["request"]["body"], str) and not i["request"]["body"].lstrip().startswith(("{", "["))
    ]
    assert raw, "errors.yaml records a non-JSON body"
    scenario = load_cassette(_write(tmp_path, "errors", {**errors, "interactions": raw}))
    for interaction, recorded in zip(scenario.interactions, raw, strict=True):
        assert interaction.request_raw == recorded["request"]["body"].encode("utf-8")
        assert interaction.request_json is None


def test_a_get_has_no_body(tmp_path):
    info = _recording("server-info")
    for interaction in load_cassette(_write(tmp_path, "server-info", info)).interactions:
        assert interaction.method == "GET"
        assert interaction.request_raw is None and interaction.request_json is None


def test_hand_edits_vcrpy_would_not_write_are_read_as_meant(tmp_path):
    """A lower-case method, a query string, a status code as text, no status message, a header
    given as one string instead of a list, and a null body."""
    data = _recording("server-info")
    recorded = data["interactions"][0]
    request = {**recorded["request"], "method": "get", "uri": recorded["request"]["uri"] + "?x=1"}
    headers = {name: values[0] for name, values in recorded["response"]["headers"].items()}
    response = {
        **recorded["response"],
        "status": {"code": str(recorded["response"]["status"]["code"])},
        "headers": headers,
        "body": {"string": None},
    }
    (interaction,) = load_cassette(
        _write(tmp_path, "edited", {"interactions": [{"request": request, "response": response}], "version": 1})
    ).interactions
    assert interaction.method == "GET"
    assert interaction.path == "/health"
    assert interaction.status == recorded["response"]["status"]["code"]
    assert interaction.reason == ""
    assert dict(interaction.headers) == headers
    assert interaction.body == b""


def test_a_cassette_without_interactions_is_refused(tmp_path):
    assert (
        _refusal(_write(tmp_path, "none", {"interactions": [], "version": 1})) == "the cassette holds no interactions"
    )


def test_the_malformed_interaction_is_named_by_its_number(tmp_path):
    data = _recording("text-cut-8")
    broken = dict(data["interactions"][1])
    broken["response"] = {k: v for k, v in broken["response"].items() if k != "status"}
    data["interactions"][1] = broken
    reason = _refusal(_write(tmp_path, "broken", data))
    assert reason.startswith("interaction 2 is malformed (KeyError(")


def test_a_status_that_is_not_a_number_is_refused(tmp_path):
    data = _recording("text-cut-8")
    data["interactions"][0]["response"]["status"]["code"] = "OK"
    assert _refusal(_write(tmp_path, "bad-status", data)).startswith("interaction 1 is malformed (ValueError(")


def test_a_served_problem_names_the_interaction_and_its_route(tmp_path):
    data = _recording("text-cut-8")
    data["interactions"][2]["response"]["status"]["code"] = 700
    reason = _refusal(_write(tmp_path, "bad-code", data))
    assert reason == "interaction 3 (POST /v1/responses (stream=true)): status 700 is not an HTTP status"


@pytest.mark.parametrize("code", [100, 101, 103, 199])
def test_an_informational_status_is_refused_at_load(tmp_path, code):
    """A 1xx is never a final reply (RFC 9110 section 15.2): replayed, a client would wait forever
    for the reply that should follow it (issue 47 item 8)."""
    data = _recording("text-cut-8")
    data["interactions"][1]["response"]["status"]["code"] = code
    reason = _refusal(_write(tmp_path, "interim", data))
    assert reason.startswith(
        f"interaction 2 (POST /v1/chat/completions (stream=false)): status {code} is informational"
    )
    assert "final reply" in reason


def test_a_request_body_nested_too_deeply_is_refused(tmp_path):
    data = _recording("text-cut-8")
    nested: object = "x"
    for _ in range(MAX_JSON_DEPTH):  # with the object around it: one level more than allowed
        nested = [nested]
    data["interactions"][3]["request"]["body"] = json.dumps({"model": "x", "input": nested})
    reason = _refusal(_write(tmp_path, "deep", data))
    assert reason == f"interaction 4: its request body nests more than {MAX_JSON_DEPTH} levels"
    data["interactions"][3]["request"]["body"] = json.dumps({"model": "x", "input": nested[0]})
    load_cassette(_write(tmp_path, "deep-enough", data))  # one level less: accepted


def test_a_stream_event_nested_too_deeply_to_read_is_refused_not_a_recursion_error(tmp_path):
    data = _recording("text-cut-8")
    stream = data["interactions"][2]["response"]["body"]["string"]
    first, rest = stream.split("\n\n", 1)
    deep = "[" * 100_000 + "]" * 100_000
    data["interactions"][2]["response"]["body"]["string"] = (
        first.replace("{", '{"deep":' + deep + ",", 1) + "\n\n" + rest
    )
    reason = _refusal(_write(tmp_path, "deep-event", data))
    assert (
        reason == 'interaction 3 (POST /v1/responses (stream=true)): stream event 1 is not a JSON object with a "type"'
    )


def test_cassette_files_finds_yaml_and_yml_in_subdirectories_in_order(tmp_path):
    data = _recording("text-cut-8")
    paths = [
        _write(tmp_path / "b", "two", data),
        _write(tmp_path / "a" / "deeper", "one", data, ".yml"),
        _write(tmp_path, "three", data),
    ]
    (tmp_path / "notes.txt").write_text("not a cassette")
    (tmp_path / "dir.yaml").mkdir()  # a directory with a cassette's name is not a cassette
    assert cassette_files(tmp_path) == sorted(paths)


def _files_refusal(directory: Path) -> str:
    with pytest.raises(CassetteError) as caught:
        cassette_files(directory)
    assert caught.value.path == directory
    return caught.value.reason


def test_cassette_files_refuses_a_missing_or_empty_directory(tmp_path):
    assert _files_refusal(tmp_path / "missing") == "no such directory"
    assert _files_refusal(tmp_path) == "the directory holds no cassettes (*.yaml)"
    (tmp_path / "f").write_text("x")
    assert _files_refusal(tmp_path / "f") == "no such directory"


def test_a_link_out_of_the_directory_is_refused_and_one_inside_is_followed(tmp_path):
    data = _recording("text-cut-8")
    outside = _write(tmp_path / "outside", "elsewhere", data)
    inside_dir = tmp_path / "served"
    real = _write(inside_dir, "real", data)
    (inside_dir / "alias.yaml").symlink_to(real)
    assert cassette_files(inside_dir) == [inside_dir / "alias.yaml", real]
    (inside_dir / "escape.yaml").symlink_to(outside)
    with pytest.raises(CassetteError) as caught:
        cassette_files(inside_dir)
    assert caught.value.path == inside_dir / "escape.yaml"
    assert caught.value.reason == f"it links outside the cassette directory {inside_dir}, to {outside.resolve()}"


def test_a_link_back_to_the_top_is_not_walked_again(tmp_path):
    """Each real folder is read once, the top one included: a link inside that leads back up does
    not serve its cassettes a second time (they would then be refused as names taken twice)."""
    served = tmp_path / "served"
    real = _write(served, "real", _recording("text-cut-8"))
    (served / "sub").mkdir()
    (served / "sub" / "up").symlink_to(served)
    assert cassette_files(served) == [real]
    assert sorted(load_scenarios([served])) == ["real"]


def test_load_scenarios_merges_directories_and_refuses_a_name_twice(tmp_path):
    text, tool = _recording("text-cut-8"), _recording("tool-cut-20")
    first, second = tmp_path / "one", tmp_path / "two"
    _write(first, "text-cut-8", text)
    _write(second, "tool-cut-20", tool)
    merged = load_scenarios([first, second])
    assert sorted(merged) == ["text-cut-8", "tool-cut-20"]
    assert merged["tool-cut-20"].source == second / "tool-cut-20.yaml"
    assert len(merged["text-cut-8"].interactions) == len(text["interactions"])
    taken = _write(second / "nested", "text-cut-8", text)
    with pytest.raises(CassetteError) as caught:
        load_scenarios([first, second])
    assert caught.value.path == taken
    assert caught.value.reason == f"scenario name 'text-cut-8' is already taken by {first / 'text-cut-8.yaml'}"
    _write(second / "again", "tool-cut-20", tool)
    with pytest.raises(CassetteError, match="scenario name 'tool-cut-20' is already taken"):  # within one directory too
        load_scenarios([second])
