"""The bundled cassettes themselves, replayed by mockllama and held against a fresh llama-server.

The other live tests compare a fresh recording with the live server; this one checks what ships.
For each bundled set (stock and patched, default and forced-thinking catalogues, and the
multi-item and clients ones), every recorded request (the recorded bytes, in the order they were recorded)
goes to a fresh llama-server started as that set was, and to mockllama serving the set
(``/buggy``: as recorded). The two
replies must carry the same generated content: status, text and text deltas, tool arguments and
their deltas, item statuses, finish and stop reasons, token counts, the SSE event sequence, and
llama-server's error bodies. Ids, timestamps, timings and the prompt cache's ``cached_tokens``
differ from run to run and are left out. One fresh server per set: at temperature 0 a long reply
can depend on the server's history, so each set is replayed in its recorder's order, as recorded.
The server-error set (``status=CODE``) needs an ``--api-key`` server and a server still loading;
``test_live_server_errors.py`` records it afresh and compares it.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from mockllama.app import create_app
from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios, patched_cassette_dir
from mockllama.recordings.catalogue import load_catalogue
from mockllama.server.background import BackgroundServer
from support.httpkit import call, request_bytes

pytestmark = pytest.mark.live
STOCK, PATCHED = bundled_cassette_dir() / "llama-server-b11434", patched_cassette_dir() / "llama-server-b11434-patched"
# set -> (its directory, the catalogue it was recorded from, the fixture that starts its server)
SETS = {
    "stock": (STOCK / "smollm2-135m-instruct-q4_1", None, "start_llama_server"),
    "stock-forced-thinking": (
        STOCK / "smollm2-135m-forced-thinking",
        "forced-thinking",
        "start_forced_thinking_server",
    ),
    "multi-item": (STOCK / "smollm2-135m-instruct-q4_1-multi-item", "multi-item", "start_llama_server"),
    "clients": (STOCK / "smollm2-135m-instruct-q4_1-clients", "clients", "start_llama_server"),
    "patched": (PATCHED / "smollm2-135m-instruct-q4_1", None, "start_patched_llama_server"),
    "patched-clients": (PATCHED / "smollm2-135m-instruct-q4_1-clients", "clients", "start_patched_llama_server"),
    "patched-forced-thinking": (
        PATCHED / "smollm2-135m-forced-thinking",
        "forced-thinking",
        "start_patched_forced_thinking_server",
    ),
}
# Differ on every run, or with the machine: not generated content.
VOLATILE = {"id", "item_id", "call_id", "created_at", "created", "completed_at", "timings", "cached_tokens"}


def _without_volatile(value):
    if isinstance(value, dict):
        return {key: _without_volatile(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(item) for item in value]
    return value


def _stream(body: bytes) -> list:
    """(event name, payload) of every SSE block, payloads without their volatile fields."""
    blocks = []
    for block in body.decode("utf-8").split("\n\n"):
        name = next((line[7:] for line in block.split("\n") if line.startswith("event: ")), None)
        data = "\n".join(line[6:] for line in block.split("\n") if line.startswith("data: "))
        if data:
            blocks.append((name, _without_volatile(json.loads(data)) if data.startswith("{") else data))
    return blocks


def generated(path: str, status: int, body: bytes):
    """What the model and server produced, comparable across runs."""
    if body.startswith((b"event:", b"data:")):
        return status, _stream(body)
    data = json.loads(body)
    if path == "/props":  # the rest is the machine's (model path, slots, a random media marker)
        return status, data["build_info"], data["default_generation_settings"]["n_ctx"], data["chat_template"]
    if path == "/v1/models":
        return status, [model["id"] for model in data["data"]]
    return status, _without_volatile(data)


def _sent_bytes(interaction, planned) -> bytes:
    """The bytes the recorder sent. A cassette that kept the body as a string has them; one that
    kept a JSON body as a YAML mapping lost its key order, which llama-server reads (a tool's
    properties), so the catalogue's request, equal as JSON, gives the order back."""
    if interaction.request_raw is not None or interaction.request_json is None:
        return request_bytes(interaction)
    text = planned.body_text()
    assert json.loads(text) == interaction.request_json, f"{interaction.describe()}: not the catalogue's request"
    return text.encode("utf-8")


def _in_recorded_order(directory: Path, catalogue: Path | None):
    """(interaction, bytes to send) for the whole set, scenario by scenario in the catalogue's
    order, each scenario's requests in the order recorded."""
    scenarios = load_scenarios([directory])
    entries = [entry for entry in load_catalogue(catalogue) if entry.name in scenarios]
    assert sorted(e.name for e in entries) == sorted(scenarios), "every scenario of the set comes from its catalogue"
    sends = []
    for entry in entries:
        recorded, planned = scenarios[entry.name].interactions, entry.planned()
        planned += [None] * (len(recorded) - len(planned))  # later turns: recorded as strings
        sends += [(interaction, _sent_bytes(interaction, plan)) for interaction, plan in zip(recorded, planned)]
    return scenarios, sends


def _server_args(directory: Path) -> list[str]:
    """The options the set's server had beyond the stock command: its ``--seed``, which makes a
    request without a temperature (sampled at llama-server's default) draw the same sample again."""
    command = json.loads((directory / "provenance.json").read_text())["server_command"].split()
    return command[command.index("--seed") : command.index("--seed") + 2] if "--seed" in command else []


@pytest.mark.parametrize("name", list(SETS))
def test_every_bundled_recording_replays_what_a_fresh_llama_server_generates(name, request):
    directory, catalogue, starter = SETS[name]
    scenarios, sends = _in_recorded_order(directory, catalogue)
    live = request.getfixturevalue(starter)(*_server_args(directory))
    differences = []
    try:
        with BackgroundServer(create_app(scenarios)) as replay:
            for interaction, body in sends:
                live_reply = generated(interaction.path, *_reply(live.url, interaction.method, interaction.path, body))
                replayed = call(replay.url, interaction.method, f"/buggy{interaction.path}", body)
                replayed_reply = generated(interaction.path, replayed[0], replayed[2])
                if replayed_reply != live_reply:
                    differences.append((interaction.describe(), replayed_reply, live_reply))
    finally:
        live.stop()
    assert differences == [], f"{len(differences)} of {len(sends)} replies differ; first: {differences[0]}"
    assert {interaction.scenario for interaction, _ in sends} == set(scenarios)


def _reply(url: str, method: str, path: str, body: bytes):
    """llama-server's reply on a fresh connection, with a timeout a loaded machine can meet."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    try:
        connection.request(
            method, path, body=body if method != "GET" else None, headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()
