"""check reads a stream as the SSE specification and the openai SDK do (issue 55 item 2).

A cut stream that also carries a lying `response.completed` must be dishonest however it is framed:
CR or CRLF line ends, the lie alone framed in CR, or the lie's data `[DONE]`. The openai SDK's own
stream reader, fed the same bytes, shows what a client takes the reply for.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from openai._streaming import SSEDecoder

from mockllama import check
from mockllama.check import probes
from mockllama.server.background import BackgroundServer
from support.doubles import hybrid_terminal, reframed
from support.doubles.relay import decode_events
from support.httpkit import call


@pytest.fixture(scope="module")
def urls(server):
    running = {mode: BackgroundServer(reframed.create_app(server.url, mode)).start() for mode in reframed.MODES}
    yield {mode: double.url for mode, double in running.items()}
    for double in running.values():
        double.stop()


def _sdk_types(body: bytes) -> list[str]:
    """The event types a client on the openai SDK switches on, read as its Stream reads them."""
    types = []
    for event in SSEDecoder().iter_bytes(iter([body])):
        if event.data.startswith("[DONE]"):
            types.append(f"{event.event} with data [DONE], where the SDK stops")
            break
        types.append(json.loads(event.data)["type"])
    return types


@pytest.mark.parametrize("mode", reframed.MODES)
def test_the_sdk_takes_each_framing_s_lie_first(server, mode):
    request = probes._recorded_requests("stream", "text-cut-8", True, None)[0]
    body = reframed.encoder(mode)(reframed._with_lie(_fixed_events(server, request)))
    ends = [kind for kind in _sdk_types(body) if kind.startswith("response.completed") or "[DONE]" in kind]
    assert ends[0].startswith("response.completed"), _sdk_types(body)


def _fixed_events(server, request: dict):
    status, _, body = call(server.url, "POST", "/fixed/v1/responses", json.dumps(request).encode())
    assert status == 200
    return decode_events(body)


@pytest.mark.parametrize("mode", reframed.MODES)
def test_a_lying_terminal_event_is_dishonest_however_the_stream_is_framed(urls, mode):
    report = check.run(urls[mode], probes=["stream"])
    assert (report.verdict, report.exit_code) == ("dishonest", 1), report.summary
    for probe in report.probes:
        terminal = {aspect.name: aspect for aspect in probe.aspects}["terminal_event"]
        assert terminal.verdict == "dishonest", terminal.line
        assert "takes the reply as finished" in terminal.why, terminal.line
    assert report.summary.startswith(f"{urls[mode]}: a reply cut off at max_output_tokens is reported as finished by: ")
    # the finished streams, framed the same way without a lie, are read whole and judged honest
    assert [probe.finished.verdict for probe in report.probes if probe.finished] == ["honest"] * 2


# The default probe is what a CI gate should run: streams too ("Also seen" in issue 55).


def test_check_with_no_probe_named_looks_at_streams_too(server):
    """hybrid_terminal lies only in streams: its non-streamed replies are fixed's, honest."""
    double = BackgroundServer(hybrid_terminal.create_app(server.url)).start()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "mockllama", "check", double.url, "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        double.stop()
    report = json.loads(result.stdout)
    assert [(probe["probe"], probe["scenario"]) for probe in report["probes"]] == [
        ("text", "text-cut-8"),
        ("tool", "tool-cut-20"),
        ("stream", "text-cut-8"),
        ("stream", "tool-cut-20"),
        ("chat-text", "text-cut-8"),
        ("chat-tool", "tool-cut-20"),
        ("chat-stream", "text-cut-8"),
        ("chat-stream", "tool-cut-20"),
    ]
    assert (result.returncode, report["verdict"]) == (1, "dishonest"), report["summary"]
