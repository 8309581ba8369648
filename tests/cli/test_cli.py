"""The installed `mockllama` command, run as a user would run it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys

import pytest

from mockllama.recordings.cassettes import bundled_cassette_dir
from support.httpkit import post_json
from support.recordings import catalogued_names
from support.waiting import wait_until_listening

SEED = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0}
MOCKLLAMA = [sys.executable, "-m", "mockllama"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def serve(tmp_path):
    processes = []

    def start(*args: str) -> tuple[subprocess.Popen, int]:
        port = _free_port()
        process = subprocess.Popen(
            [*MOCKLLAMA, "serve", "--port", str(port), *args],
            cwd=tmp_path,  # any directory: the bundled cassettes travel with the package
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        wait_until_listening(process, port, 20, "mockllama serve")
        return process, port

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_serve_with_no_arguments_answers_the_issue_curl_and_stops_on_ctrl_c(serve):
    process, port = serve()
    url = f"http://127.0.0.1:{port}"
    status, _, body = post_json(url, "/fixed/v1/responses", SEED)
    assert json.loads(body)["status"] == "incomplete"
    status, _, body = post_json(url, "/buggy/v1/responses", SEED)
    assert json.loads(body)["status"] == "completed"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 0
    assert f"http://127.0.0.1:{port}/buggy/v1" in out
    assert f"http://127.0.0.1:{port}/fixed/v1" in out
    assert "Traceback" not in err


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_readme_curl_says_incomplete_then_completed(serve):
    _, port = serve()
    seed = json.dumps(SEED)
    for behaviour, expected in [("fixed", "incomplete"), ("buggy", "completed")]:
        out = subprocess.run(
            ["curl", "-s", f"localhost:{port}/{behaviour}/v1/responses", "-d", seed],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert json.loads(out)["status"] == expected


def test_serve_on_port_0_prints_the_url_it_bound_first(tmp_path):
    """What a JavaScript test setup reads (docs/typescript.md): the first line is the URL, port and all."""
    import urllib.request

    process = subprocess.Popen(
        [*MOCKLLAMA, "serve", "--port", "0"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        first = process.stdout.readline().rstrip("\n")
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", first) and not first.endswith(":0"), first
        with urllib.request.urlopen(first + "/health", timeout=10) as reply:  # listening once it is printed
            assert reply.status == 200
        banner = list(iter(process.stdout.readline, "Press Ctrl-C to stop.\n"))
        assert banner[0].startswith("mockllama ")
        assert any(re.fullmatch(rf"  fixed: +{re.escape(first)}/fixed/v1\n", line) for line in banner), banner
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0 and "Traceback" not in err


def test_serve_default_behaviour_option(serve):
    _, port = serve("--behaviour", "fixed")
    status, headers, body = post_json(f"http://127.0.0.1:{port}", "/v1/responses", SEED)
    assert headers["X-Mockllama-Behaviour"] == "fixed"
    assert json.loads(body)["status"] == "incomplete"


def test_serve_warns_on_a_non_loopback_bind(serve):
    process, port = serve("--host", "0.0.0.0")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=20)
    assert "not loopback" in err


def test_serve_with_a_corrupt_cassette_exits_2_naming_file_and_reason(tmp_path):
    shutil.copy(bundled_cassette_dir() / "llama-server-b11434/smollm2-135m-instruct-q4_1/text-cut-8.yaml", tmp_path)
    (tmp_path / "half.yaml").write_text("interactions:\n- request: {method: POST\n")
    result = subprocess.run([*MOCKLLAMA, "serve", "--cassettes", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 2
    assert str(tmp_path / "half.yaml") in result.stderr and "not valid YAML" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_with_an_unknown_fallback_says_which_exist():
    result = subprocess.run([*MOCKLLAMA, "serve", "--fallback", "nope"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "'nope'" in result.stderr and "text-cut-8" in result.stderr


def test_serve_on_a_busy_port_says_so(serve):
    _, port = serve()
    result = subprocess.run([*MOCKLLAMA, "serve", "--port", str(port)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "cannot listen" in result.stderr and "Traceback" not in result.stderr
    assert "/buggy/v1" not in result.stdout  # no URLs announced for a server that is not there


def test_scenarios_lists_each_with_status_and_twin(tmp_path):
    result = subprocess.run([*MOCKLLAMA, "scenarios"], capture_output=True, text=True, cwd=tmp_path, check=True)
    lines = {line.split()[0]: line.split() for line in result.stdout.splitlines()[1:]}
    assert sorted(name.split("@")[0] for name in lines) == sorted(catalogued_names())  # a sweep: NAME@1-LAST
    assert lines["tool-two-calls-cut-70"][:6] == [
        "tool-two-calls-cut-70",
        "1",
        "70",
        "completed",
        "incomplete",
        "length",
    ]
    assert lines["text-cut-8"][:6] == ["text-cut-8", "1", "8", "completed", "incomplete", "length"]
    assert lines["text-exact-limit"][:6] == ["text-exact-limit", "1", "8", "completed", "completed", "stop"]
    assert lines["tool-finishes"][5] == "tool_calls"
    assert "/v1/chat/completions" in lines["tool-cut-20"]
    assert lines["tool-cut-20"][1] == "1"  # one turn


def test_scenarios_json(tmp_path):
    result = subprocess.run([*MOCKLLAMA, "scenarios", "--json"], capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    row = next(r for r in rows if r["name"] == "tool-cut-30")
    assert row["twin_finish_reason"] == "length" and row["responses_status"] == "completed"


def test_help_explains_behaviours_and_selection():
    out = subprocess.run([*MOCKLLAMA, "serve", "--help"], capture_output=True, text=True, check=True).stdout
    for words in ["/buggy/v1", "/fixed/v1", "X-Mockllama-Behaviour", "X-Mockllama-Scenario", "--fallback"]:
        assert words in out


def test_bundled_cassettes_are_found_outside_the_checkout(tmp_path):
    env = {**os.environ, "PYTHONPATH": ""}
    code = "from mockllama.recordings.cassettes import bundled_cassette_dir as d; print(len(list(d().rglob('*.yaml'))))"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str(len(catalogued_names())), out.stderr


def test_the_access_log_counts_every_byte_of_a_stream(serve):
    """``--access-log``'s ``%b`` is what was sent, head included, also for a stream written at once."""
    from support.httpkit import raw_reply, request_bytes
    from support.recordings import SCENARIOS

    process, port = serve("--access-log")
    body = request_bytes(SCENARIOS["poem-finishes"].find("POST", "/v1/responses", True))
    reply = raw_reply(f"http://127.0.0.1:{port}", "/buggy/v1/responses", body)
    assert reply.startswith(b"HTTP/1.1 200") and len(reply) > 5000
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=20)
    logged = [line for line in err.splitlines() if '"POST /buggy/v1/responses HTTP/1.1" 200' in line]
    assert len(logged) == 1, err
    assert int(logged[0].rsplit(" ", 1)[1]) == len(reply)


def test_explain_names_each_sweep_once_when_asked_for_an_unknown_name():
    result = subprocess.run([*MOCKLLAMA, "explain", "tool-call@99"], capture_output=True, text=True)
    assert result.returncode == 2 and "no scenario named 'tool-call@99'" in result.stderr
    assert "tool-call (or tool-call@N, N 1-37)" in result.stderr and "tool-call@1," not in result.stderr
