"""mockllama check against real llama-servers (issue 26 item 3, issue 27 item 2, issue 54 item 2).

Stock llama-server b11434 has the bug in every aspect somewhere: exit 1, and `--probe all` names
all six; its chat endpoint is honest, and the exit code is the worse endpoint's. The patched
build (patches/llama-server-responses-incomplete.patch) reports every aspect of every probe
honestly, and every reply with room to finish as finished: exit 0. And check reads a reply
longer than 8 KiB from llama-server, which sends `Connection: close` on every reply.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mockllama.wire import sse
from mockllama.wire.untrusted_http import Target, fetch

pytestmark = pytest.mark.live
MOCKLLAMA = [sys.executable, "-m", "mockllama"]
ASPECTS = [
    "status",
    "incomplete_details.reason",
    "cut_item.status",
    "completed_at",
    "terminal_event",
    "function_call_arguments.done",
]
H, D, W, NA = "honest", "dishonest", "wrong", "not applicable"
STOCK = (
    "Known variant: stock llama-server: 'completed' everywhere, no incomplete_details, no "
    "function_call_arguments.done (ggml-org/llama.cpp issue 30773)."
)


def _check(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MOCKLLAMA, "check", url, *args], capture_output=True, text=True, timeout=600)


def _responses(report: dict) -> list[dict]:
    return [probe for probe in report["probes"] if probe["endpoint"] == "/v1/responses"]


def _verdicts(report: dict) -> list[list[str]]:
    probes = _responses(report)
    assert [[aspect["name"] for aspect in probe["aspects"]] for probe in probes] == [ASPECTS] * 4
    return [[aspect["verdict"] for aspect in probe["aspects"]] for probe in probes]


def _chat_is_honest(report: dict) -> None:
    """llama-server's chat endpoint, stock or patched: every cut reply says "length", every finished one not."""
    chat = [probe for probe in report["probes"] if probe["endpoint"] == "/v1/chat/completions"]
    assert [(probe["verdict"], probe["finished"]["verdict"]) for probe in chat] == [(H, H)] * 4
    assert report["endpoints"]["/v1/chat/completions"]["verdict"] == H


def test_check_finds_the_bug_in_llama_server_in_every_aspect(start_llama_server):
    server = start_llama_server()
    try:
        text = _check(server.url, "--probe", "text")
        every = _check(server.url, "--json")  # the default probes all, streams too
    finally:
        server.stop()
    print(text.stdout, every.stdout)
    assert text.returncode == 1, text.stdout + text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("/v1/responses max_output_tokens=8: status='completed' incomplete_details=None")
    assert lines[1] == "/v1/chat/completions max_tokens=8: finish_reason='length' completion_tokens=8"
    assert lines[2:5] == [
        "  dishonest status: 'completed' (says the reply finished)",
        "  wrong     incomplete_details.reason: absent (nothing says the reply was cut at max_output_tokens)",
        "  dishonest cut item status: the last item ('message') says 'completed' "
        "(says the item being generated finished)",
    ]
    assert lines[5].startswith("  dishonest completed_at: ")
    assert lines[-1] == (
        f"{server.url}: a reply cut off at max_output_tokens is reported as finished by: status, "
        f"cut item status, completed_at; also wrong: incomplete_details.reason. {STOCK}"
    )
    report = json.loads(every.stdout)
    assert every.returncode == report["exit_code"] == 1
    # text, tool, then streamed: the stream's last response has no completed_at; no arguments.done at all
    assert _verdicts(report) == [[D, W, D, D, NA, NA], [D, W, D, D, NA, NA], [D, W, D, H, D, NA], [D, W, D, H, D, W]]
    # its replies that finished inside their limit say so, but for the finished call streamed with no
    # function_call_arguments.done, which the streaming protocol sends for every call
    assert [probe["finished"]["verdict"] for probe in _responses(report)] == [H, H, H, W]
    responses = report["endpoints"]["/v1/responses"]["summary"]
    assert responses.startswith(
        f"{server.url}: a reply cut off at max_output_tokens is reported as finished by: status, cut item status, "
        f"completed_at, terminal event; also wrong: incomplete_details.reason, function_call_arguments.done. "
        "A reply that finished inside its limit is reported wrongly: function_call_arguments.done"
    )
    assert responses.endswith(STOCK)
    # its chat endpoint is honest: the exit code is the worse endpoint's
    _chat_is_honest(report)


def test_check_passes_against_the_patched_server(start_patched_llama_server):
    server = start_patched_llama_server()
    try:
        every = _check(server.url, "--probe", "all")
        as_json = _check(server.url, "--probe", "all", "--json")
    finally:
        server.stop()
    print(every.stdout)
    assert every.returncode == 0, every.stdout + every.stderr
    assert "status='incomplete' incomplete_details={'reason': 'max_output_tokens'}" in every.stdout
    assert "last event='response.incomplete' status='incomplete'" in every.stdout
    assert "function_call_arguments.done for 1 of 1 calls" in every.stdout
    assert every.stdout.splitlines()[-3:] == [
        "/v1/responses honest: a reply cut off at max_output_tokens is reported as 'incomplete' "
        "(reason 'max_output_tokens').",
        "/v1/chat/completions honest: a reply cut off at max_tokens is reported as finish_reason 'length'.",
        f"{server.url}: honest (exit 0), the worse of /v1/responses honest and /v1/chat/completions honest.",
    ]
    report = json.loads(as_json.stdout)
    assert as_json.returncode == report["exit_code"] == 0
    assert _verdicts(report) == [[H, H, H, H, NA, NA], [H, H, H, H, NA, NA], [H, H, H, H, H, NA], [H, H, H, H, H, H]]
    # and a reply with room to finish is reported "completed": the fix does not say "incomplete" to everything
    _chat_is_honest(report)
    assert [(probe["finished"]["scenario"], probe["finished"]["verdict"]) for probe in _responses(report)] == [
        ("text-finishes", H),
        ("tool-finishes", H),
        ("text-finishes", H),
        ("tool-finishes", H),
    ]


def test_check_reads_a_reply_past_8_kib_from_llama_server(start_llama_server):
    """check asks for one connection a request (`Connection: close`), and llama-server answers with
    `Connection: close`; http.client then closed the socket before the body was read, and every
    read after its first 8 KiB failed (b518762: "Bad file descriptor"). A plain body and a stream."""
    server = start_llama_server()
    target = Target.parse(server.url)
    count = [{"role": "user", "content": "Count from 1 to 200, separated by spaces."}]
    with_logprobs = {
        "model": "x",
        "messages": count,
        "max_tokens": 200,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": 5,
    }  # five alternatives a token: tens of kilobytes of JSON
    streamed = {"model": "x", "input": count[0]["content"], "max_output_tokens": 200, "temperature": 0, "stream": True}
    try:
        plain = fetch(target, "POST", "/v1/chat/completions", with_logprobs, timeout=600)
        stream = fetch(target, "POST", "/v1/responses", streamed, timeout=600)
    finally:
        server.stop()
    for reply in (plain, stream):
        assert reply.status == 200 and reply.headers["Connection"].lower() == "close"
        assert len(reply.body) > 16 * 1024, len(reply.body)
    whole = json.loads(plain.body)  # read to its end: one logprob entry for each token generated
    assert len(whole["choices"][0]["logprobs"]["content"]) == whole["usage"]["completion_tokens"] > 100
    events = [event.json() for event in sse.parse_stream(stream.body)]
    assert events[-1]["type"] == "response.completed"
    deltas = "".join(event["delta"] for event in events if event["type"] == "response.output_text.delta")
    assert deltas and deltas == events[-1]["response"]["output"][0]["content"][0]["text"]
