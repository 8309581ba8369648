"""mockllama record against a real llama-server, and the replay checked against it."""

from __future__ import annotations

import hashlib
import http.client
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from livekit import free_port, wait_for_health

from mockllama.recordings.cassettes import load_scenarios
from mockllama.recordings.catalogue import load_catalogue
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH

pytestmark = pytest.mark.live
MOCKLLAMA = [sys.executable, "-m", "mockllama"]
SECRET = "sk-live-planted-secret-42"


def send(url: str, planned) -> tuple[int, bytes]:
    """One request on a fresh connection, as llama-server wants (it answers Connection: close)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    try:
        if planned.json is not None:
            body = json.dumps(planned.json).encode()
        else:
            body = planned.data.encode() if planned.data is not None else None
        headers = {"Content-Type": "application/json", **planned.headers} if body is not None else {}
        connection.request(planned.method, planned.path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _items(response: dict) -> list:
    return [
        (item.get("type"), item.get("status"), [c.get("text") for c in item.get("content", [])], item.get("arguments"))
        for item in response.get("output", [])
    ]


def view(path: str, status: int, body: bytes):
    """What must agree between llama-server and its replay; ids, times and timings may differ."""
    if body.startswith((b"event:", b"data:")):
        events = []
        for block in body.decode().split("\n\n"):
            name = next((line[7:] for line in block.split("\n") if line.startswith("event: ")), None)
            data = next((line[6:] for line in block.split("\n") if line.startswith("data: ")), None)
            if data is None:
                continue
            parsed = json.loads(data) if data.startswith("{") else data
            events.append((name, parsed))
        types = [name or (p.get("object") if isinstance(p, dict) else p) for name, p in events]
        payloads = [p for _, p in events if isinstance(p, dict)]
        if path == RESPONSES_PATH:
            return status, types, payloads[-1]["response"]["status"], _items(payloads[-1]["response"])
        if path == CHAT_PATH:
            finish = [c.get("finish_reason") for p in payloads for c in p.get("choices", []) if c.get("finish_reason")]
            text = "".join(c["delta"].get("content") or "" for p in payloads for c in p.get("choices", []))
            arguments = "".join(
                t["function"].get("arguments", "")
                for p in payloads
                for c in p.get("choices", [])
                for t in c["delta"].get("tool_calls") or []
            )
            return status, types, finish, text, arguments
        deltas = [p.get("delta") for p in payloads if p.get("type") == "content_block_delta"]
        stop = [p["delta"].get("stop_reason") for p in payloads if p.get("type") == "message_delta"]
        return status, types, deltas, stop
    data = json.loads(body)
    if path == RESPONSES_PATH and status == 200:
        return status, data["status"], data.get("incomplete_details"), _items(data)
    if path == CHAT_PATH and status == 200:
        message = data["choices"][0]["message"]
        return (
            status,
            data["choices"][0]["finish_reason"],
            message.get("content"),
            message.get("tool_calls") and [t["function"] for t in message["tool_calls"]],
        )
    if path == "/v1/messages" and status == 200:
        return status, data["stop_reason"], [{k: v for k, v in c.items() if k != "id"} for c in data["content"]]
    if path == "/props":
        return status, data["build_info"], data["default_generation_settings"]["n_ctx"], data["chat_template"]
    if path == "/v1/models":
        return status, [model["id"] for model in data["data"]]
    return status, data


@pytest.fixture(scope="module")
def recording(start_llama_server, tmp_path_factory) -> Path:
    """The default catalogue, recorded by `mockllama record` from a fresh llama-server."""
    server = start_llama_server()
    out = tmp_path_factory.mktemp("live-recording")
    result = subprocess.run(
        [*MOCKLLAMA, "record", "--server", server.url, "--out", str(out), "--server-command", server.command],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    server.stop()
    assert result.returncode == 0, result.stderr
    print(result.stdout)
    return out


def test_recording_reproduces_the_bug_on_every_cut_scenario(recording):
    provenance = json.loads((recording / "provenance.json").read_text())
    scenarios = load_scenarios([recording])
    cut = [
        name
        for name in scenarios
        if "-cut-" in name and not name.startswith("messages-") and scenarios[name].turns == 1
    ]
    assert len(cut) == 9
    conversation = scenarios["tool-conversation-cut-20"]  # the cut call sent back: llama-server refuses it
    assert provenance["scenarios"]["tool-conversation-cut-20"].startswith("turn1:responses=completed twin=length")
    assert [conversation.find("POST", RESPONSES_PATH, stream, 2).status for stream in (False, True)] == [500, 500]
    for name in cut:
        assert provenance["scenarios"][name] == "responses=completed twin=length"
        for stream in (False, True):
            responses = scenarios[name].find("POST", RESPONSES_PATH, stream)
            assert scenarios[name].twin_finish_reason(responses) == "length"
            status = (json.loads(responses.body) if not stream else json.loads(responses.events[-1].data)["response"])[
                "status"
            ]
            assert status == "completed", (name, stream)
    for name in ("text-finishes", "text-exact-limit", "ladder-finishes", "tool-finishes", "poem-finishes"):
        twin = scenarios[name].twin_finish_reason(scenarios[name].find("POST", RESPONSES_PATH, False))
        assert twin in ("stop", "tool_calls"), name


def test_provenance_comes_from_the_server(recording):
    provenance = json.loads((recording / "provenance.json").read_text())
    assert provenance["build_info"] == "b0-unknown"
    assert provenance["model"] == "SmolLM2-135M-Instruct-Q4_1"
    assert provenance["n_ctx"] == 4096
    assert "--chat-template-file" in provenance["server_command"]
    template = provenance["server_command"].split("--chat-template-file ")[1].split()[0]
    assert provenance["chat_template_sha256"] == hashlib.sha256(Path(template).read_bytes()).hexdigest()


def test_replay_agrees_with_the_live_server_on_every_scenario(recording, start_llama_server):
    """Serve the fresh recording as buggy, and send the catalogue in the recorder's own order to a
    fresh llama-server and to the mock: a fresh server given the same sequence decodes the same."""
    port = free_port()
    mock = subprocess.Popen(
        [*MOCKLLAMA, "serve", "--cassettes", str(recording), "--behaviour", "buggy", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    live = start_llama_server()
    try:
        mock_url = f"http://127.0.0.1:{port}"
        log = recording / "mock.log"
        log.write_text("")
        wait_for_health(mock_url, mock, log, seconds=30)
        compared = 0
        for entry in load_catalogue():
            for planned in entry.planned():
                live_view = view(planned.path, *send(live.url, planned))
                mock_view = view(planned.path, *send(mock_url, planned))
                assert mock_view == live_view, (entry.name, planned.describe())
                compared += 1
        assert compared == 83  # every first-turn request of the default catalogue: 3 + 16 x 4 + 4 x 2 + 8
    finally:
        live.stop()
        mock.terminate()
        mock.wait(timeout=20)


def test_planted_authorization_never_reaches_the_cassette(start_llama_server, tmp_path):
    server = start_llama_server()
    try:
        result = subprocess.run(
            [
                *MOCKLLAMA,
                "record",
                "--server",
                server.url,
                "--out",
                str(tmp_path),
                "--scenario",
                "text-cut-8",
                "--api-key",
                SECRET,
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    written = (tmp_path / "text-cut-8.yaml").read_text()
    assert SECRET not in written and "authorization" not in written.lower()
    assert written.count("request:") == 4
