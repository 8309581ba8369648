"""`serve --upstream` against a real llama-server: the openai SDK records through mockllama, then
the upstream stops and the recordings replay the same bytes; fixed says incomplete for the cut ones."""

from __future__ import annotations

import base64
import json
import shlex
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest
from livekit import free_port

from benchmarks.upstream import measure
from mockllama.app import create_app
from mockllama.recordings.cassettes import load_scenarios
from mockllama.server.background import BackgroundServer
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.proxy import RECORDER
from mockllama.upstream.record_mode import RecordMode
from mockllama.upstream.record_on_miss import RecordOnMiss
from support.docs_recording import run_section, section, start_mockllama, stop_mockllama
from support.recordings import SCENARIOS
from support.waiting import wait_for

pytestmark = pytest.mark.live
pytest_plugins = ["pytester"]  # for the plugin round trip, also when this file runs alone

SECRET = "sk-live-planted-on-a-miss"  # the client's key: Authorization, X-Api-Key, a cookie
PASSWORD = "live-planted-password"  # in the upstream URL's userinfo
BASIC = base64.b64encode(f"bob:{PASSWORD}".encode()).decode()  # what the userinfo becomes upstream
TEXT = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0}
TOOL = {
    k: v for k, v in SCENARIOS["tool-cut-20"].find("POST", "/v1/responses", False).request_json.items() if k != "stream"
}
REQUESTS = {"text": TEXT, "tool": TOOL}


def _client(base_url: str, api_key: str = SECRET) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=120,
        default_headers={"Cookie": f"session={api_key}", "X-Api-Key": api_key},
    )


def _sdk_bytes(base_url: str, request: dict, stream: bool, api_key: str = SECRET):
    """(headers, body bytes) of one request sent by the openai SDK."""
    client = _client(base_url, api_key)
    if stream:
        with client.responses.with_streaming_response.create(**request, stream=True) as response:
            return response.headers, b"".join(response.iter_bytes())
    raw = client.responses.with_raw_response.create(**request)
    return raw.headers, raw.content


def _settle(app) -> None:
    """Wait until the recording (and its twin) is written, so the next miss does not overlap it."""
    assert wait_for(lambda: not app[RECORDER].in_flight, 120, 0.05)


def _last_event(body: bytes) -> dict:
    blocks = [b for b in body.decode().split("\n\n") if b.strip()]
    data = next(line[6:] for line in blocks[-1].split("\n") if line.startswith("data: "))
    return json.loads(data)


def _post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _fixed_says_incomplete(base_url: str, request: dict, stream: bool) -> None:
    fixed = _client(base_url)
    if stream:
        events = list(fixed.responses.create(**request, stream=True))
        assert events[-1].type == "response.incomplete"
        assert events[-1].response.incomplete_details.reason == "max_output_tokens"
    else:
        response = fixed.responses.create(**request)
        assert response.status == "incomplete" and response.output[-1].status == "incomplete"
        assert response.incomplete_details.reason == "max_output_tokens"


def _written(directory: Path) -> str:
    return "".join(path.read_text() for path in sorted(directory.rglob("*")) if path.is_file())


def test_sdk_through_the_proxy_records_then_replays_the_same_bytes_offline(start_llama_server, tmp_path):
    llama = start_llama_server()
    record_to = tmp_path / "recorded"
    address = llama.url.replace("http://", f"http://bob:{PASSWORD}@")
    app = create_app({}, record_on_miss=RecordOnMiss(parse_upstream(address), record_to, RecordMode.NEW))
    first = {}
    with BackgroundServer(app) as proxy:
        for name, request in REQUESTS.items():
            for stream in (False, True):
                headers, body = _sdk_bytes(f"{proxy.url}/buggy/v1", request, stream)
                assert headers["X-Mockllama-Selected-By"] == "upstream", (name, stream)
                first[name, stream] = (headers["X-Mockllama-Scenario"], body)
                _settle(app)
        for name in REQUESTS:  # the bug, live: a cut reply reported completed, and the twin says length
            reply = json.loads(first[name, False][1])
            assert reply["status"] == "completed" and _last_event(first[name, True][1])["type"] == "response.completed"
        assert json.loads(first["tool", False][1])["output"][-1]["type"] == "function_call"
        recorded = load_scenarios([record_to])
        assert len(recorded) == 2  # the streamed and plain variants of a request share one cassette
        for scenario in recorded.values():
            responses = [i for i in scenario.interactions if i.path == "/v1/responses"]
            assert len(responses) == 2 and {scenario.twin_finish_reason(i) for i in responses} == {"length"}

        llama.stop()  # from here on, offline: the same server answers from what it recorded
        for (name, stream), (_scenario, body) in first.items():
            headers, again = _sdk_bytes(f"{proxy.url}/buggy/v1", REQUESTS[name], stream)
            assert (again, headers["X-Mockllama-Selected-By"]) == (body, "match"), (name, stream)
            _fixed_says_incomplete(f"{proxy.url}/fixed/v1", REQUESTS[name], stream)
        status, down = _post(f"{proxy.url}/buggy/v1/responses", {**TEXT, "max_output_tokens": 9})  # a miss
        assert status == 502 and set(down) == {"error"} and set(down["error"]) >= {"code", "message", "type"}
        assert (down["error"]["code"], down["error"]["type"]) == (502, "unavailable_error")
        assert f"upstream llama-server at {llama.url} " in down["error"]["message"]
        assert PASSWORD not in down["error"]["message"]

    port = free_port()  # later: `mockllama serve --cassettes DIR`, no upstream anywhere
    later = start_mockllama(f"mockllama serve --cassettes {shlex.quote(str(record_to))}", port, tmp_path)
    try:
        for (name, stream), (scenario, body) in first.items():
            headers, again = _sdk_bytes(f"http://127.0.0.1:{port}/buggy/v1", REQUESTS[name], stream)
            assert again == body and headers["X-Mockllama-Scenario"] == scenario, (name, stream)
            _fixed_says_incomplete(f"http://127.0.0.1:{port}/fixed/v1", REQUESTS[name], stream)
    finally:
        stop_mockllama(later)

    written = _written(record_to)
    assert written.count("interactions:") == 2 and "provenance" in " ".join(p.name for p in record_to.iterdir())
    for secret in (SECRET, PASSWORD, BASIC, "bob"):
        assert secret not in written, secret


def test_a_key_the_upstream_requires_is_forwarded_and_never_written(start_llama_server, tmp_path):
    key = "sk-live-upstream-requires-this"
    llama = start_llama_server("--api-key", key)
    assert _post(f"{llama.url}/v1/responses", TEXT)[0] == 401  # it really does require the key
    assert _post(f"{llama.url}/v1/responses?api_key={key}", TEXT)[0] == 401  # and never reads it from the query
    record_to = tmp_path / "recorded"
    app = create_app({}, record_on_miss=RecordOnMiss(parse_upstream(llama.url), record_to, RecordMode.NEW))
    with BackgroundServer(app) as proxy:
        for stream in (False, True):
            headers, body = _sdk_bytes(f"{proxy.url}/buggy/v1", TEXT, stream, api_key=key)  # a 401 would raise
            assert headers["X-Mockllama-Selected-By"] == "upstream"
            assert (_last_event(body) if stream else json.loads(body))["type" if stream else "status"] in (
                "response.completed",
                "completed",
            )
            _settle(app)
    assert len(load_scenarios([record_to])) == 1
    written = _written(record_to)
    assert "interactions:" in written and key not in written


@pytest.fixture(scope="module")
def llama(start_llama_server):
    return start_llama_server()


def test_time_to_first_byte_through_the_proxy_against_direct(llama):
    result = measure(llama.url, rounds=2)
    print("\n" + "\n".join(result.lines()))
    medians = result.medians()
    # The first byte does not wait for the end of generation: it comes well before the stream ends.
    assert medians["proxied_first_byte"] < medians["proxied_total"] / 2
    assert medians["direct_first_byte"] < medians["direct_total"] / 2


def test_the_docs_recording_page_runs_against_a_real_llama_server(llama, tmp_path):
    _, _, promised = section()
    (_, first), (_, second) = run_section(llama.url, tmp_path)
    assert first == second == promised


INNER = """
import json
import openai

def _keep(name, value):
    with open("observed.jsonl", "a") as sink:
        sink.write(json.dumps([name, value]) + "\\n")

def test_colours(mockllama):
    client = openai.OpenAI(base_url=mockllama.base_url("fixed"), api_key="unused", max_retries=0)
    response = client.responses.create(model="x", input="Name three colours.", max_output_tokens=6, temperature=0)
    _keep("colours", [response.status, response.output_text, response.id, response.usage.output_tokens])

def test_colours_stream(mockllama):
    client = openai.OpenAI(base_url=mockllama.base_url("buggy"), api_key="unused", max_retries=0)
    events = list(client.responses.create(model="x", input="Name three colours.", max_output_tokens=6,
                                          temperature=0, stream=True))
    _keep("stream", [[e.type for e in events], events[-1].response.id, events[-1].response.output_text])
"""


def test_plugin_round_trip_records_against_llama_server_then_runs_offline(llama, pytester):
    pytester.makepyfile(test_client=INNER)
    online = pytester.runpytest_subprocess("--mockllama-upstream", llama.url, "-p", "no:cacheprovider")
    assert online.ret == 0, online.stdout.str()[-3000:]
    online.assert_outcomes(passed=2)
    observed = pytester.path / "observed.jsonl"
    first = observed.read_text()
    observed.unlink()
    assert len(list((pytester.path / "mockllama-cassettes").glob("*.yaml"))) == 1  # streamed and plain share it
    offline = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert offline.ret == 0, offline.stdout.str()[-3000:]
    offline.assert_outcomes(passed=2)
    assert observed.read_text() == first
    colours = json.loads(first.splitlines()[0])[1]
    assert colours[0] == "incomplete" and colours[3] == 6  # cut at the limit, and fixed says so
