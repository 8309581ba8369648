"""`mockllama record`: the catalogue, the chat twin, vcrpy cassettes, scrubbing and safe writes.

These run against mockllama itself; tests/live/ runs the recorder against a real llama-server.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys

import pytest
from aiohttp import web

from mockllama.app import create_app
from mockllama.recordings.cassettes import load_cassette, load_scenarios
from mockllama.recordings.catalogue import (
    CatalogueError,
    load_catalogue,
    load_setup,
    parse_catalogue,
    parse_setup,
    responses_requests,
)
from mockllama.recordings.chat_twin import chat_twin
from mockllama.server.background import BackgroundServer
from mockllama.wire.headers import HOP_BY_HOP
from support import ROOT

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
SECRET = "sk-planted-secret-0123456789"


def _record(url, out, *args):
    return subprocess.run(
        [*MOCKLLAMA, "record", "--server", url, "--out", str(out), *args], capture_output=True, text=True, timeout=120
    )


def _body(interaction):
    return interaction.request_json if interaction.request_raw is None else interaction.request_raw


def _same_body(recorded, sent: bytes | None) -> bool:
    """A string body must be the very bytes sent; an older mapping body can only be compared as JSON."""
    if recorded.request_raw is not None or sent is None:
        return recorded.request_raw == sent
    return recorded.request_json == json.loads(sent)


def _planned_bytes(planned) -> bytes | None:
    text = planned.body_text()
    return None if text is None else text.encode()


BUNDLED_CATALOGUES = sorted((ROOT / "mockllama" / "recordings" / "catalogues").glob("*.json"))


def test_the_bundled_catalogues_reproduce_the_bundled_requests_exactly(scenarios):
    """The default catalogue, forced-thinking, and the server-error catalogues (scripts/record-server-errors.py)."""
    every = load_catalogue() + [entry for path in BUNDLED_CATALOGUES for entry in load_catalogue(path)]
    # a sweep's positions: tests/recordings/test_record_sweep.py records them and compares them whole
    entries = [entry for entry in every if entry.sweep is None]
    assert sorted(entry.name for entry in entries) == sorted(scenarios)
    for entry in entries:
        recorded = scenarios[entry.name].interactions
        planned, body = entry.planned(), entry.responses
        for number in range(1, len(entry.turns) + 1):  # a conversation: each turn from the reply before
            body = entry.next_turn(number, body, recorded[len(planned) - 4].body_json)
            planned += responses_requests(body)
        assert [(p.method, p.path) for p in planned] == [(i.method, i.path) for i in recorded], entry.name
        for p, i in zip(planned, recorded):
            assert _same_body(i, _planned_bytes(p)), (entry.name, p.describe())


def test_json_bodies_are_recorded_as_the_exact_string_sent(server, tmp_path):
    """vcrpy keeps a json= body as a mapping with sorted keys; the order of a tool schema's
    properties changes what llama-server generates, so the recorder must send and keep a string."""
    result = _record(server.url, tmp_path, "--scenario", "tool-cut-20")
    assert result.returncode == 0, result.stderr
    entry = next(e for e in load_catalogue() if e.name == "tool-cut-20")
    recorded = load_cassette(tmp_path / "tool-cut-20.yaml").interactions
    assert [i.request_raw for i in recorded] == [_planned_bytes(p) for p in entry.planned()]
    properties = recorded[0].request_json["tools"][0]["parameters"]["properties"]
    assert list(properties) == ["path", "content"]  # not sorted: content would come first


def test_chat_twin_converts_items_instructions_tools_and_tool_choice():
    request = {
        "model": "x",
        "instructions": "Be brief.",
        "max_output_tokens": 16,
        "temperature": 0,
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
        "tools": [{"type": "function", "name": "f", "description": "d", "parameters": {"type": "object"}}],
        "tool_choice": {"type": "function", "name": "f"},
    }
    assert chat_twin(request) == {
        "model": "x",
        "max_tokens": 16,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
            {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}
        ],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
    }
    assert chat_twin({"input": "Hello", "max_output_tokens": 8})["messages"] == [{"content": "Hello", "role": "user"}]


@pytest.mark.parametrize(
    ("catalogue", "words"),
    [
        ({"scenarios": [{"name": "a"}]}, "exactly one of"),
        ({"scenarios": [{"name": "a", "responses": {}}, {"name": "a", "responses": {}}]}, "appears twice"),
        ({"scenarios": [{"name": "../escape", "responses": {}}]}, 'plain "name"'),
        ({"scenarios": [{"name": "a", "requests": [{"method": "POST"}]}]}, 'needs at least a "path"'),
        ([1, 2], '"scenarios" list'),
        ({"scenarios": [{"name": "a", "requests": [], "turns": []}]}, 'only beside "responses"'),
        ({"scenarios": [{"name": "a", "responses": {}, "turns": [{"drop": ["x"]}]}]}, 'needs a "tool_output"'),
        ({"scenarios": [{"name": "a", "responses": {}, "note": ["sampled"]}]}, '"note" must be a string'),
        # A name goes into the X-Mockllama-Scenario reply header: no CR, LF, ESC or DEL (issue 55, item 7)
        ({"scenarios": [{"name": "a\r\nX-Evil: 1", "responses": {}}]}, "control character"),
        ({"scenarios": [{"name": "a\x1b[2J", "responses": {}}]}, "control character"),
        ({"scenarios": [{"name": "a\x7f", "responses": {}}]}, "control character"),
    ],
)
def test_bad_catalogues_are_refused_with_a_reason(catalogue, words):
    with pytest.raises(CatalogueError, match=words):
        parse_catalogue(catalogue)


def test_round_trip_through_mockllama_reproduces_the_source_interactions(server, scenarios, tmp_path):
    scenarios = {entry.name: scenarios[entry.name] for entry in load_catalogue()}  # the default catalogue's
    result = _record(server.url, tmp_path)
    assert result.returncode == 0, result.stderr
    copied = load_scenarios([tmp_path])
    assert sorted(copied) == sorted(entry.name for entry in load_catalogue())
    for name, source in ((name, scenarios[name]) for name in copied):
        assert len(copied[name].interactions) == len(source.interactions)
        for mine, theirs in zip(copied[name].interactions, source.interactions):
            assert (mine.method, mine.path) == (theirs.method, theirs.path)
            assert mine.request_raw is not None or mine.method == "GET"  # recorded as the string sent
            assert _same_body(theirs, mine.request_raw)
            assert (mine.status, mine.body) == (theirs.status, theirs.body)
            kept = {(k.lower(), v) for k, v in mine.headers}
            assert {(k.lower(), v) for k, v in theirs.headers if k.lower() not in HOP_BY_HOP} <= kept
    provenance = json.loads((tmp_path / "provenance.json").read_text())
    assert provenance["build_info"] == "b0-unknown" and provenance["n_ctx"] == 4096
    assert provenance["model"] == "SmolLM2-135M-Instruct-Q4_1"
    assert provenance["scenarios"]["text-cut-8"] == "responses=completed twin=length"
    assert len(provenance["chat_template_sha256"]) == 64
    assert any(
        line.split() == ["text-cut-8", "responses=completed", "twin=length"] for line in result.stdout.splitlines()
    )


def _with_planted_cookie(app: web.Application) -> web.Application:
    async def plant(request, response):
        response.headers["Set-Cookie"] = f"session={SECRET}; HttpOnly"
        response.headers["X-Api-Key"] = SECRET

    app.on_response_prepare.append(plant)
    return app


def test_secrets_never_reach_the_cassette(scenarios, tmp_path):
    catalogue = tmp_path / "catalogue.json"
    planted = {
        "Authorization": f"Bearer {SECRET}",
        "api-key": SECRET,
        "x-api-key": SECRET,
        "Cookie": f"session={SECRET}",
    }
    catalogue.write_text(
        json.dumps(
            {
                "scenarios": [
                    {
                        "name": "text-cut-8",
                        "requests": [
                            {
                                "path": "/v1/responses",
                                "headers": planted,
                                "json": {
                                    "model": "x",
                                    "input": "Count from 1 to 200, separated by spaces.",
                                    "max_output_tokens": 8,
                                    "temperature": 0,
                                },
                            }
                        ],
                    },
                ]
            }
        )
    )
    out = tmp_path / "out"
    with BackgroundServer(_with_planted_cookie(create_app(scenarios))) as server:
        result = _record(server.url, out, "--catalogue", str(catalogue), "--api-key", SECRET)
    assert result.returncode == 0, result.stderr
    written = (out / "text-cut-8.yaml").read_text()
    assert SECRET not in written
    for header in ("authorization", "api-key", "cookie", "set-cookie"):
        assert f"{header}:" not in written.lower()
    assert SECRET not in (out / "provenance.json").read_text()
    assert "status" in written  # the interaction itself was kept


def test_an_interrupted_scenario_keeps_the_old_cassette_and_leaves_no_partial_file(scenarios, tmp_path):
    async def slow(request):
        await asyncio.sleep(5)
        return web.json_response({})

    app = create_app(scenarios)
    app.router.add_post("/v1/slow", slow)
    out = tmp_path / "out"
    out.mkdir()
    old = out / "text-cut-8.yaml"
    old.write_text("the old cassette\n")
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(
        json.dumps(
            {
                "scenarios": [
                    {
                        "name": "text-cut-8",
                        "requests": [
                            {"path": "/v1/responses", "json": {"model": "text-cut-8", "input": "x"}},
                            {"path": "/v1/slow", "json": {}},
                        ],
                    }
                ]
            }
        )
    )
    with BackgroundServer(app) as server:
        result = _record(server.url, out, "--catalogue", str(catalogue), "--timeout", "0.5")
    assert result.returncode == 2
    assert "text-cut-8" in result.stderr and "0.5 s" in result.stderr
    assert old.read_text() == "the old cassette\n"
    assert sorted(p.name for p in out.iterdir()) == ["text-cut-8.yaml"]


def test_a_server_that_is_down_exits_2(tmp_path):
    with BackgroundServer(web.Application()) as server:
        url = server.url
    result = _record(url, tmp_path / "out")
    assert result.returncode == 2
    assert "cannot reach" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_server_that_is_not_llama_server_exits_2(tmp_path):
    async def html(request):
        return web.Response(text="<html>hello</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/health", html)
    app.router.add_get("/props", html)
    with BackgroundServer(app) as server:
        result = _record(server.url, tmp_path / "out")
    assert result.returncode == 2
    assert "does not look like llama-server" in result.stderr


def test_unknown_scenario_and_bad_catalogue_exit_2(server, tmp_path):
    result = _record(server.url, tmp_path, "--scenario", "nope")
    assert result.returncode == 2 and "no scenario nope" in result.stderr and "text-cut-8" in result.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = _record(server.url, tmp_path, "--catalogue", str(broken))
    assert result.returncode == 2 and "not valid JSON" in result.stderr


def test_only_the_named_scenarios_are_recorded(server, tmp_path):
    result = _record(server.url, tmp_path, "--scenario", "tool-cut-20", "--scenario", "server-info")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.glob("*.yaml")) == ["server-info.yaml", "tool-cut-20.yaml"]
    assert len(load_cassette(tmp_path / "tool-cut-20.yaml").interactions) == 4


def test_record_help_explains_the_catalogue():
    out = subprocess.run([*MOCKLLAMA, "record", "--help"], capture_output=True, text=True, check=True).stdout
    assert '"responses"' in out and '"requests"' in out and "max_output_tokens -> max_tokens" in out


def test_a_patched_server_is_recorded_with_the_patch_name_and_sha256(server, tmp_path):
    patch = tmp_path / "fix.patch"
    patch.write_bytes(b"--- a/x\n+++ b/x\n")
    out = tmp_path / "out"
    result = _record(server.url, out, "--scenario", "text-cut-8", "--server-patch", str(patch))
    assert result.returncode == 0, result.stderr
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["server_patch"] == {"file": "fix.patch", "sha256": hashlib.sha256(patch.read_bytes()).hexdigest()}
    result = _record(
        server.url, tmp_path / "again", "--scenario", "text-cut-8", "--server-patch", str(tmp_path / "nope")
    )
    assert result.returncode == 2 and "nope" in result.stderr and "Traceback" not in result.stderr


def test_a_scenario_s_note_is_copied_into_provenance(server, tmp_path):
    """What a reader of a recording must know (a sampled reply, say) travels with it."""
    seed = {
        "input": "Count from 1 to 200, separated by spaces.",
        "max_output_tokens": 8,
        "model": "x",
        "temperature": 0,
    }
    catalogue = tmp_path / "noted.json"
    catalogue.write_text(
        json.dumps(
            {
                "scenarios": [
                    {"name": "text-cut-8", "note": "what this one is", "responses": seed},
                    {"name": "text-cut-64", "responses": {**seed, "max_output_tokens": 64}},
                ]
            }
        )
    )
    result = _record(server.url, tmp_path / "out", "--catalogue", str(catalogue))
    assert result.returncode == 0, result.stderr
    provenance = json.loads((tmp_path / "out" / "provenance.json").read_text())
    assert provenance["notes"] == {"text-cut-8": "what this one is"}
    assert sorted(provenance["scenarios"]) == ["text-cut-64", "text-cut-8"]


def _catalogue_for_setup(tmp_path, sha256: str):
    catalogue = tmp_path / "setup-catalogue.json"
    catalogue.write_text(
        json.dumps(
            {
                "setup": {
                    "name": "some-setup",
                    "chat_template_file": "Some-Template.jinja",
                    "chat_template_sha256": sha256,
                    "note": "what these recordings are",
                },
                "scenarios": [
                    {
                        "name": "text-cut-8",
                        "responses": {
                            "input": "Count from 1 to 200, separated by spaces.",
                            "max_output_tokens": 8,
                            "model": "x",
                            "temperature": 0,
                        },
                    }
                ],
            }
        )
    )
    return catalogue


def _served_template_sha256(scenarios) -> str:
    props = next(i for i in scenarios["server-info"].interactions if i.path == "/props").body_json
    return hashlib.sha256(props["chat_template"].encode("utf-8")).hexdigest()


def test_a_catalogue_for_another_chat_template_is_refused_before_anything_is_recorded(server, tmp_path):
    result = _record(server.url, tmp_path / "out", "--catalogue", str(_catalogue_for_setup(tmp_path, "0" * 64)))
    assert result.returncode == 2
    assert "set-up 'some-setup'" in result.stderr and "Some-Template.jinja" in result.stderr
    assert "scripts/llama-server.sh run --setup some-setup PORT" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_catalogue_setup_is_checked_and_copied_into_provenance(server, scenarios, tmp_path):
    sha256 = _served_template_sha256(scenarios)
    result = _record(server.url, tmp_path / "out", "--catalogue", str(_catalogue_for_setup(tmp_path, sha256)))
    assert result.returncode == 0, result.stderr
    provenance = json.loads((tmp_path / "out" / "provenance.json").read_text())
    assert provenance["setup"] == "some-setup" and provenance["chat_template_file"] == "Some-Template.jinja"
    assert provenance["chat_template_sha256"] == sha256 and provenance["note"] == "what these recordings are"


@pytest.mark.parametrize(
    "setup", [[], {"name": "a"}, {"name": "a", "chat_template_file": "t", "note": "n", "chat_template_sha256": 1}]
)
def test_a_malformed_setup_is_refused_with_a_reason(setup):
    with pytest.raises(CatalogueError, match='"setup" must be an object'):
        parse_setup({"setup": setup, "scenarios": []})


def test_bundled_catalogues_are_known_by_name():
    assert load_setup("default") is None
    assert load_catalogue("default") == load_catalogue()


def test_the_forced_thinking_catalogue_is_refused_by_a_server_with_the_stock_template(server, tmp_path):
    result = _record(server.url, tmp_path / "out", "--catalogue", "forced-thinking")
    assert result.returncode == 2 and "Qwen-QwQ-32B.jinja" in result.stderr
    assert "--setup smollm2-135m-forced-thinking" in result.stderr
