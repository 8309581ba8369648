"""The plugin's recording options: a client's suite runs once with an upstream, then offline.

The upstream is mockllama replaying the bundled recordings; the inner suite names its own
scenarios (X-Mockllama-Scenario), which the bundled recordings lack, so each is a miss the first
time. tests/live/test_live_record_on_miss.py runs a round trip against a real llama-server.
"""

from __future__ import annotations

import json
import time

import pytest

from mockllama.app import create_app
from mockllama.server.background import BackgroundServer
from mockllama.upstream.record_on_miss import SHUTDOWN_GRACE
from support.doubles.llama_server import Stalling
from support.recordings import SCENARIOS

pytest_plugins = ["pytester"]

INNER = """
import json, pathlib
import openai

COUNT = dict(model="x", input="Count from 1 to 200, separated by spaces.", max_output_tokens=8, temperature=0)

def _keep(name, value):
    with open("observed.jsonl", "a") as sink:
        sink.write(json.dumps([name, value]) + "\\n")

def test_text(mockllama):
    client = openai.OpenAI(base_url=mockllama.base_url("fixed"), api_key="unused",
                           default_headers={"X-Mockllama-Scenario": "my-count"})
    response = client.responses.create(**COUNT)
    _keep("text", [response.status, response.output_text, response.id])
    assert response.status == "incomplete"

def test_stream(mockllama):
    client = openai.OpenAI(base_url=mockllama.base_url("buggy"), api_key="unused",
                           default_headers={"X-Mockllama-Scenario": "my-count-stream"})
    events = [event.type for event in client.responses.create(**COUNT, stream=True)]
    _keep("stream", events)
    assert events[-1] == "response.completed"
"""


@pytest.fixture
def inner_suite(pytester):
    pytester.makepyfile(test_client=INNER)
    return pytester


def _observed(pytester) -> list:
    path = pytester.path / "observed.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.unlink()
    return lines


def test_a_suite_records_once_then_runs_offline_with_the_same_results(inner_suite):
    with BackgroundServer(create_app(SCENARIOS)) as upstream:
        first = inner_suite.runpytest_subprocess("--mockllama-upstream", upstream.url, "-p", "no:cacheprovider")
    first.assert_outcomes(passed=2)
    recorded = sorted(p.name for p in (inner_suite.path / "mockllama-cassettes").glob("*.yaml"))
    assert recorded == ["my-count-stream.yaml", "my-count.yaml"]
    online = _observed(inner_suite)
    second = inner_suite.runpytest_subprocess("-p", "no:cacheprovider")  # no upstream: offline
    second.assert_outcomes(passed=2)
    assert _observed(inner_suite) == online


def test_ini_options_record_too(inner_suite):
    with BackgroundServer(create_app(SCENARIOS)) as upstream:
        inner_suite.makeini(
            f"[pytest]\nmockllama_upstream = {upstream.url}\nmockllama_record_mode = new_episodes\n"
            "mockllama_record_to = recorded\n"
        )
        inner_suite.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)
    assert len(list((inner_suite.path / "recorded").glob("*.yaml"))) == 2


def test_a_bad_record_mode_stops_the_session_with_the_reason(inner_suite):
    result = inner_suite.runpytest_subprocess("--mockllama-record-mode", "sometimes", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*mockllama: unknown record mode 'sometimes'; use one of: none, new*"])
    result.stdout.no_fnmatch_line("*Traceback*")


CAPPED = """
import json, urllib.error, urllib.request

def test_a_reply_over_the_cap_is_a_502_and_not_recorded(mockllama):
    count = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8,
             "temperature": 0}
    request = urllib.request.Request(mockllama.url + "/fixed/v1/responses", data=json.dumps(count).encode(),
                                     headers={"Content-Type": "application/json", "X-Mockllama-Scenario": "my-capped"})
    try:
        urllib.request.urlopen(request)
    except urllib.error.HTTPError as err:
        assert err.code == 502 and "more than 100 bytes" in err.read().decode()
    else:
        raise AssertionError("a reply over --mockllama-max-reply-bytes was answered")
"""


def test_the_upstream_options_of_serve_are_the_plugins_too(pytester):
    """--mockllama-max-reply-bytes and mockllama_upstream_timeout reach the recorder, as serve's do."""
    pytester.makepyfile(test_capped=CAPPED)
    pytester.makeini("[pytest]\nmockllama_upstream_timeout = 30\n")
    with BackgroundServer(create_app(SCENARIOS)) as upstream:
        result = pytester.runpytest_subprocess(
            "--mockllama-upstream", upstream.url, "--mockllama-max-reply-bytes", "100", "-p", "no:cacheprovider"
        )
    result.assert_outcomes(passed=1)
    assert not list((pytester.path / "mockllama-cassettes").glob("*.yaml"))


BUGGY_ONLY = """
import openai

def test_text(mockllama):
    client = openai.OpenAI(base_url=mockllama.base_url("buggy"), api_key="unused",
                           default_headers={"X-Mockllama-Scenario": "stalled-twin"})
    response = client.responses.create(model="x", input="Count from 1 to 200, separated by spaces.",
                                       max_output_tokens=8, temperature=0)
    assert response.status == "completed"
"""


def test_a_stalled_upstream_does_not_hold_the_end_of_the_session(pytester):
    """Issue 47 item 4: the client has its reply, its chat twin never comes; the session ends after
    SHUTDOWN_GRACE, not after the upstream timeout (300 s), and nothing of it is written."""
    pytester.makepyfile(test_client=BUGGY_ONLY)
    double = Stalling("/v1/chat/completions")
    with BackgroundServer(double.app()) as upstream:
        started = time.monotonic()
        try:
            result = pytester.runpytest_subprocess(
                "--mockllama-upstream", upstream.url, "-p", "no:cacheprovider", timeout=SHUTDOWN_GRACE + 60
            )
        finally:
            double.release()
        took = time.monotonic() - started
    result.assert_outcomes(passed=1)
    assert double.heard.is_set() and took < SHUTDOWN_GRACE + 45, took
    assert list((pytester.path / "mockllama-cassettes").glob("*.yaml")) == []
