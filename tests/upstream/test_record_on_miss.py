"""`serve --upstream`: replay a match, forward and record a miss, serve the recording at once.

The upstream here is mockllama itself replaying the bundled llama-server recordings (as
tests/recordings/test_record.py does for `mockllama record`), or a small aiohttp app where a test needs an
upstream that fails in a given way. tests/live/test_live_record_on_miss.py runs the same path
against a real llama-server.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
import time
from pathlib import Path

import pytest
from aiohttp import web
from click.testing import CliRunner

from mockllama.app import ServeOptions, create_app
from mockllama.cli import main
from mockllama.recordings.cassettes import load_cassette, load_scenarios
from mockllama.server.background import BackgroundServer
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.flight import Sent
from mockllama.upstream.proxy import RECORDER
from mockllama.upstream.record_mode import RecordMode, decide, parse_record_mode
from mockllama.upstream.record_on_miss import RecordOnMiss
from mockllama.upstream.scenario_names import slug_name
from mockllama.wire.errors import RequestError
from support.httpkit import call, chunks_on_the_wire, post_json, sse_pairs
from support.recordings import SCENARIOS
from support.waiting import wait_for

SEED = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0}
SECRET = "sk-planted-secret-on-a-miss"
PASSWORD = "hunter2-planted-password"


def _request(name: str, stream: bool):
    """The exact bytes a client sent when the bundled scenario was recorded."""
    interaction = SCENARIOS[name].find("POST", "/v1/responses", stream)
    return json.dumps(interaction.request_json).encode()


class Seen:
    """What the upstream saw: (path, start, end, headers) per request, thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls: list[tuple[str, float, float, dict]] = []

    def paths(self) -> list[str]:
        with self.lock:
            return [path for path, *_ in self.calls]

    def middleware(self):
        @web.middleware
        async def watch(request, handler):
            start = time.monotonic()
            response = await handler(request)
            with self.lock:
                self.calls.append((request.path, start, time.monotonic(), dict(request.headers)))
            return response

        return watch


@pytest.fixture
def upstream():
    """mockllama replaying the real recordings, watched; ``pace`` slows it like a real server."""
    running = []

    def start(pace=None, seen: Seen | None = None, prepare=None) -> BackgroundServer:
        app = create_app(SCENARIOS, ServeOptions(pace=pace))
        if seen is not None:
            app.middlewares.append(seen.middleware())
        if prepare is not None:
            app.on_response_prepare.append(prepare)
        running.append(BackgroundServer(app).start())
        return running[-1]

    yield start
    for server in running:
        server.stop()


@pytest.fixture
def proxy(tmp_path):
    """mockllama with --upstream: nothing recorded yet, recording into tmp_path/recorded."""
    running = []

    def start(upstream_url: str, mode="new", scenarios=None, timeout=30.0, **settings) -> BackgroundServer:
        options = RecordOnMiss(parse_upstream(upstream_url, timeout), tmp_path / "recorded", parse_record_mode(mode))
        app = create_app({} if scenarios is None else scenarios, ServeOptions(**settings), record_on_miss=options)
        running.append(BackgroundServer(app).start())
        return running[-1]

    yield start
    for server in running:
        server.stop()


def _recorded(path: Path, seconds: float = 10) -> Path:
    """A buggy client has its reply before the twin is fetched: wait for the cassette."""
    wait_for(path.exists, seconds)
    return path


def _settled(mock: BackgroundServer, seconds: float = 10) -> None:
    """Until no recording is in progress: a client following the upstream's reply has it before
    the recording is written (in a thread), and an identical request meanwhile joins that flight."""
    assert wait_for(lambda: not mock.app[RECORDER].in_flight, seconds)


def _written(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


# --- the record modes and the one decision -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "mode"),
    [("none", RecordMode.NONE), ("new", RecordMode.NEW), ("new_episodes", RecordMode.NEW), ("ALL", RecordMode.ALL)],
)
def test_record_modes_accept_vcrpys_spellings(text, mode):
    assert parse_record_mode(text) is mode


def test_an_unknown_record_mode_lists_the_valid_ones():
    with pytest.raises(ValueError, match="none, new .*new_episodes.*all"):
        parse_record_mode("once")


def test_decide_replays_a_match_refuses_under_none_and_forwards_under_new_and_all():
    def miss():
        raise RequestError(404, "no recording")

    assert decide(RecordMode.NEW, lambda: "the match") == "the match"
    assert decide(RecordMode.NONE, lambda: "the match") == "the match"
    with pytest.raises(RequestError):
        decide(RecordMode.NONE, miss)
    assert decide(RecordMode.NEW, miss) is None
    assert decide(RecordMode.ALL, lambda: pytest.fail("all never asks the recordings")) is None


# --- a miss, forwarded, recorded, replayed ---------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_miss_is_forwarded_recorded_and_then_replayed_with_the_same_bytes(upstream, proxy, tmp_path, stream):
    up = upstream()
    mock = proxy(up.url)
    body = _request("text-cut-8", stream)
    direct_status, _, direct = call(up.url, "POST", "/v1/responses", body)
    status, headers, first = call(mock.url, "POST", "/buggy/v1/responses", body)
    assert (status, first) == (direct_status, direct)  # the upstream's reply, byte for byte
    assert headers["X-Mockllama-Selected-By"] == "upstream"
    name = headers["X-Mockllama-Scenario"]
    assert name.startswith("count-from-1-to-200-separated-by-spaces-8-")
    assert headers["Content-Type"] == ("text/event-stream" if stream else "application/json; charset=utf-8")

    scenario = load_cassette(_recorded(tmp_path / "recorded" / f"{name}.yaml"))
    main, twin = scenario.interactions
    assert (main.path, main.request_raw, main.body) == ("/v1/responses", body, direct)  # the exact bytes sent
    assert twin.path == "/v1/chat/completions" and twin.stream is stream
    assert scenario.twin_finish_reason(main) == "length"

    _settled(mock)  # the cassette is on disk before the server has added it to what it matches
    status, headers, again = call(mock.url, "POST", "/buggy/v1/responses", body)
    assert (status, again, headers["X-Mockllama-Selected-By"]) == (200, first, "match")
    with BackgroundServer(create_app(load_scenarios([tmp_path / "recorded"]))) as later:  # serve --cassettes DIR
        assert call(later.url, "POST", "/buggy/v1/responses", body)[2] == first
    provenance = json.loads((tmp_path / "recorded" / "provenance.json").read_text())
    assert provenance["scenarios"][name] == "responses=completed twin=length"
    assert provenance["build_info"] == "b0-unknown" and provenance["server_url"] == up.url
    assert "serve --upstream" in provenance["recorded_by"]


def test_a_stream_is_forwarded_block_by_block_as_a_replay_frames_it(upstream, proxy, tmp_path):
    up = upstream()
    mock = proxy(up.url)
    body = _request("tool-cut-20", True)
    proxied = chunks_on_the_wire(mock.url, "/buggy/v1/responses", body)
    recorded = SCENARIOS["tool-cut-20"].find("POST", "/v1/responses", True)
    assert proxied == [event.raw for event in recorded.events]
    name = slug_name(Sent("POST", "/v1/responses", "", body, (), None))
    _recorded(tmp_path / "recorded" / f"{name}.yaml")
    assert chunks_on_the_wire(mock.url, "/buggy/v1/responses", body) == proxied  # the replay, framed the same


def test_the_first_block_does_not_wait_for_the_end_of_generation(upstream, proxy):
    up = upstream(pace=0.1)  # ten times slower than recorded: ~0.8 s for text-cut-64's stream
    mock = proxy(up.url)
    body = _request("text-cut-64", True)
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", int(mock.url.rsplit(":", 1)[1]), timeout=30)
    connection.request("POST", "/buggy/v1/responses", body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read1(1)
    first_at = time.monotonic() - started
    response.read()
    total = time.monotonic() - started
    connection.close()
    assert total > 1.0
    assert first_at < total / 3, (first_at, total)


def test_a_client_that_goes_away_mid_stream_does_not_cut_the_recording(upstream, proxy, tmp_path):
    mock = proxy(upstream(pace=0.5).url)
    body = _request("text-cut-64", True)
    head = (
        f"POST /buggy/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", int(mock.url.rsplit(":", 1)[1])), timeout=30) as sock:
        sock.sendall(head + body)
        assert sock.recv(100).startswith(b"HTTP/1.1 200")
    name = slug_name(Sent("POST", "/v1/responses", "", body, (), None))
    scenario = load_cassette(_recorded(tmp_path / "recorded" / f"{name}.yaml"))
    assert scenario.interactions[0].body == SCENARIOS["text-cut-64"].find("POST", "/v1/responses", True).body


def test_stopping_the_server_finishes_the_recording_in_progress(upstream, tmp_path):
    # A test session that ends right after its last request: the client has its reply, the twin
    # (paced as recorded: about 1 s for text-cut-64's stream) is still running when the server
    # stops, and ends within the shutdown grace (SHUTDOWN_GRACE, 5 s).
    seen = Seen()
    options = RecordOnMiss(parse_upstream(upstream(pace=1.0, seen=seen).url), tmp_path / "recorded", RecordMode.NEW)
    with BackgroundServer(create_app({}, record_on_miss=options)) as mock:
        call(mock.url, "POST", "/buggy/v1/responses", _request("text-cut-64", True))
        assert "/v1/chat/completions" not in seen.paths()  # the twin has not finished yet
    recorded = load_scenarios([tmp_path / "recorded"])
    (scenario,) = recorded.values()
    assert [i.path for i in scenario.interactions] == ["/v1/responses", "/v1/chat/completions"]


@pytest.mark.parametrize("behaviour", ["fixed", "spec"])
@pytest.mark.parametrize("name", ["text-cut-8", "tool-cut-20"])
def test_fixed_and_spec_on_a_miss_get_the_corrected_reply(upstream, proxy, behaviour, name):
    up = upstream()
    mock = proxy(up.url)
    status, headers, body = call(mock.url, "POST", f"/{behaviour}/v1/responses", _request(name, False))
    assert status == 200 and headers["X-Mockllama-Selected-By"] == "upstream"
    reply = json.loads(body)
    assert reply["status"] == "incomplete" and reply["incomplete_details"] == {"reason": "max_output_tokens"}
    status, headers, stream = call(mock.url, "POST", f"/{behaviour}/v1/responses", _request(name, True))
    events = sse_pairs(stream)
    assert events[-1][0] == "response.incomplete"
    assert "response.completed" not in [event for event, _ in events]


def test_a_finished_reply_stays_completed_under_fixed(upstream, proxy):
    mock = proxy(upstream().url)
    status, _, body = call(mock.url, "POST", "/fixed/v1/responses", _request("tool-finishes", False))
    assert status == 200 and json.loads(body)["status"] == "completed"


def test_the_twin_is_fetched_only_after_the_clients_reply_is_complete(upstream, proxy):
    seen = Seen()
    up = upstream(pace=1.0, seen=seen)
    mock = proxy(up.url)
    call(mock.url, "POST", "/buggy/v1/responses", _request("text-cut-64", True))
    wait_for(lambda: "/v1/chat/completions" in seen.paths())
    with seen.lock:
        calls = {path: (start, end) for path, start, end, _ in seen.calls}
    assert calls["/v1/chat/completions"][0] >= calls["/v1/responses"][1]


def test_two_identical_concurrent_misses_make_one_generation_and_one_recording(upstream, proxy, tmp_path):
    seen = Seen()
    up = upstream(pace=1.0, seen=seen)  # the recorded ~0.3 s: long enough for both to be in flight
    mock = proxy(up.url)
    body = _request("text-cut-64", True)
    replies = [None, None, None]

    def client(index, behaviour):
        replies[index] = call(mock.url, "POST", f"/{behaviour}/v1/responses", body)

    threads = [threading.Thread(target=client, args=(i, b)) for i, b in enumerate(["buggy", "buggy", "fixed"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r[0] for r in replies] == [200, 200, 200]
    assert replies[0][2] == replies[1][2]
    assert sse_pairs(replies[2][2])[-1][0] == "response.incomplete"
    generations = [p for p in seen.paths() if p in ("/v1/responses", "/v1/chat/completions")]
    assert generations == ["/v1/responses", "/v1/chat/completions"]
    assert [n for n in _written(tmp_path / "recorded") if n.endswith(".yaml")] == [
        replies[0][1]["X-Mockllama-Scenario"] + ".yaml"
    ]


def test_the_scenario_header_names_the_cassette_and_both_stream_flags_share_it(upstream, proxy, tmp_path):
    mock = proxy(upstream().url)
    header = {"X-Mockllama-Scenario": "my-count"}
    for stream in (False, True):  # fixed waits for each recording, so the second appends to the first
        status, headers, _ = call(mock.url, "POST", "/fixed/v1/responses", _request("text-cut-8", stream), header)
        assert status == 200 and headers["X-Mockllama-Scenario"] == "my-count"
    scenario = load_cassette(tmp_path / "recorded" / "my-count.yaml")
    assert [(i.path, i.stream) for i in scenario.interactions] == [
        ("/v1/responses", False),
        ("/v1/chat/completions", False),
        ("/v1/responses", True),
        ("/v1/chat/completions", True),
    ]
    # any prompt now gets it, as for a bundled scenario
    status, headers, body = post_json(mock.url, "/fixed/v1/responses", {"input": "anything"}, header)
    assert (status, headers["X-Mockllama-Selected-By"], json.loads(body)["status"]) == (200, "header", "incomplete")


def _conversation(stream: bool) -> list[bytes]:
    """An agent loop's requests, turn by turn: tool-conversation's, each turn carrying the reply before it."""
    recorded = [i for i in SCENARIOS["tool-conversation"].interactions if i.path == "/v1/responses"]
    return [json.dumps(i.request_json).encode() for i in recorded if i.stream is stream]


@pytest.mark.parametrize("stream", [False, True])
def test_a_conversation_recorded_under_one_name_keeps_every_turn_and_settles(upstream, proxy, tmp_path, stream):
    """Issue 47 item 1: merged by (method, path, stream), turn 2 replaced turn 1, and each run of the
    loop flipped which turn survived. Merged by turn too, the second run replays both and writes nothing."""
    seen = Seen()
    mock = proxy(upstream(seen=seen).url)
    header = {"X-Mockllama-Scenario": "loop"}
    turns = _conversation(stream)
    assert len(turns) == 2
    first = [call(mock.url, "POST", "/fixed/v1/responses", body, header) for body in turns]
    assert [(status, h["X-Mockllama-Selected-By"]) for status, h, _ in first] == [(200, "upstream")] * 2
    cassette = tmp_path / "recorded" / "loop.yaml"
    scenario = load_cassette(cassette)
    assert [(i.path, i.turn) for i in scenario.interactions] == [
        ("/v1/responses", 1),
        ("/v1/chat/completions", 1),
        ("/v1/responses", 2),
        ("/v1/chat/completions", 2),
    ]
    written = {p.name: p.read_bytes() for p in (tmp_path / "recorded").iterdir()}
    generations = seen.paths()

    again = [call(mock.url, "POST", "/fixed/v1/responses", body, header) for body in turns]
    assert [(status, h["X-Mockllama-Selected-By"], h["X-Mockllama-Turn"]) for status, h, _ in again] == [
        (200, "header", "1"),
        (200, "header", "2"),
    ]
    assert [reply for _, _, reply in again] == [reply for _, _, reply in first]
    assert seen.paths() == generations  # nothing went upstream
    assert {p.name: p.read_bytes() for p in (tmp_path / "recorded").iterdir()} == written  # nothing written
    with BackgroundServer(create_app(load_scenarios([tmp_path / "recorded"]))) as offline:
        replayed = [call(offline.url, "POST", "/fixed/v1/responses", body, header) for body in turns]
    assert [(status, reply) for status, _, reply in replayed] == [(200, reply) for _, _, reply in first]


def test_a_scenario_header_that_is_not_a_file_name_is_refused(upstream, proxy, tmp_path):
    mock = proxy(upstream().url)
    status, _, body = call(
        mock.url,
        "POST",
        "/buggy/v1/responses",
        _request("text-cut-8", False),
        {"X-Mockllama-Scenario": "../../etc/evil"},
    )
    assert status == 400 and "file name" in json.loads(body)["error"]["message"]
    assert _written(tmp_path / "recorded") == []


def test_mode_none_replays_only(upstream, proxy, tmp_path):
    seen = Seen()
    mock = proxy(upstream(seen=seen).url, mode="none")
    status, _, body = call(mock.url, "POST", "/buggy/v1/responses", _request("text-cut-8", False))
    assert status == 404 and json.loads(body)["error"]["type"] == "not_found_error"
    assert seen.paths() == [] and _written(tmp_path / "recorded") == []


def test_mode_all_records_again_what_is_already_recorded(upstream, proxy, tmp_path):
    seen = Seen()
    mock = proxy(upstream(seen=seen).url, mode="all", scenarios=dict(SCENARIOS))
    body = _request("text-cut-8", False)
    for _ in range(2):  # fixed waits for the recording, so the second request is a flight of its own
        status, headers, _ = call(mock.url, "POST", "/fixed/v1/responses", body)
        assert status == 200 and headers["X-Mockllama-Selected-By"] == "upstream"
    assert seen.paths().count("/v1/responses") == 2
    cassette = _recorded(tmp_path / "recorded" / f"{headers['X-Mockllama-Scenario']}.yaml")
    time.sleep(0.3)  # the second recording replaces the first in the same file
    assert len(load_cassette(cassette).interactions) == 2


def test_fallback_cannot_be_combined_with_recording(upstream, tmp_path):
    options = RecordOnMiss(parse_upstream("http://127.0.0.1:9"), tmp_path, RecordMode.NEW)
    with pytest.raises(ValueError, match="--fallback"):
        create_app(dict(SCENARIOS), ServeOptions(fallback="text-cut-8"), record_on_miss=options)


# --- errors: nothing half-written ------------------------------------------------------------------


def test_an_upstream_that_is_down_gets_a_502_naming_it_without_its_password(proxy, tmp_path):
    with BackgroundServer(web.Application()) as gone:
        port = gone.port
    mock = proxy(f"http://user:{PASSWORD}@127.0.0.1:{port}")
    status, headers, body = call(mock.url, "POST", "/buggy/v1/responses", _request("text-cut-8", False))
    error = json.loads(body)["error"]
    assert status == 502 and error["code"] == 502 and error["type"] == "unavailable_error"
    assert f"http://127.0.0.1:{port}" in error["message"] and PASSWORD not in error["message"]
    assert "nothing was recorded" in error["message"]
    assert _written(tmp_path / "recorded") == []
    assert call(mock.url, "POST", "/fixed/v1/responses", _request("text-cut-8", False))[0] == 502


def _fake_llama_server(handler) -> web.Application:
    """Just enough llama-server for the probe; ``handler`` answers /v1/responses."""

    def answer(payload):
        async def reply(request):
            return web.json_response(payload)

        return reply

    app = web.Application()
    app.router.add_get("/health", answer({"status": "ok"}))
    app.router.add_get("/props", answer({"default_generation_settings": {"n_ctx": 512}}))
    app.router.add_get("/v1/models", answer({"data": [{"id": "fake"}]}))
    app.router.add_post("/v1/responses", handler)
    return app


def test_an_upstream_that_does_not_answer_in_time_gets_a_504(proxy, tmp_path):
    async def silent(request):
        await asyncio.sleep(5)
        return web.json_response({})

    with BackgroundServer(_fake_llama_server(silent)) as slow:
        mock = proxy(slow.url, timeout=0.5)
        status, _, body = call(mock.url, "POST", "/buggy/v1/responses", _request("text-cut-8", False))
    error = json.loads(body)["error"]
    assert status == 504 and slow.url in error["message"] and "0.5 s" in error["message"]
    assert _written(tmp_path / "recorded") == []


def test_a_stream_that_breaks_off_upstream_is_cut_for_the_client_and_never_written(proxy, tmp_path):
    async def breaks(request):
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'event: response.created\ndata: {"type":"response.created"}\n\n')
        await asyncio.sleep(0.2)
        request.transport.close()
        return response

    with BackgroundServer(_fake_llama_server(breaks)) as broken:
        mock = proxy(broken.url)
        with pytest.raises((http.client.HTTPException, ConnectionError)):  # the stream stops, no clean end
            call(mock.url, "POST", "/buggy/v1/responses", _request("text-cut-8", True))
        time.sleep(0.3)
    assert _written(tmp_path / "recorded") == []


def test_upstream_errors_are_passed_through_and_recorded_as_they_are(upstream, proxy, tmp_path):
    up = upstream()
    mock = proxy(up.url)
    for body in (json.dumps({"model": "x", "input": 42}).encode(), b'{"input": '):
        direct = call(up.url, "POST", "/v1/responses", body)
        status, _, first = call(mock.url, "POST", "/buggy/v1/responses", body)
        assert direct[0] == 400 and (status, first) == (400, direct[2])  # llama-server's own 400, recorded
        _settled(mock)  # the client has its reply before the recording is written
        status, headers, again = call(mock.url, "POST", "/buggy/v1/responses", body)
        assert (status, again, headers["X-Mockllama-Selected-By"]) == (
            400,
            first,
            "match" if body[-1:] == b"}" else "recorded-bytes",
        )


def test_secrets_never_reach_the_record_directory(upstream, proxy, tmp_path):
    async def plant(request, response):
        response.headers["Set-Cookie"] = f"session={SECRET}"
        response.headers["X-Api-Key"] = SECRET

    seen = Seen()
    up = upstream(seen=seen, prepare=plant)
    mock = proxy(up.url.replace("http://", f"http://bob:{PASSWORD}@"))
    planted = {
        "Authorization": f"Bearer {SECRET}",
        "api-key": SECRET,
        "x-api-key": SECRET,
        "Cookie": f"session={SECRET}",
        "X-Custom-Token": SECRET,
    }
    for stream in (False, True):
        status, headers, _ = call(mock.url, "POST", "/fixed/v1/responses", _request("text-cut-8", stream), planted)
        assert status == 200 and SECRET not in str(dict(headers))
    written = "".join(p.read_text() for p in (tmp_path / "recorded").iterdir())
    assert "interactions" in written
    for secret in (SECRET, PASSWORD, "bob"):
        assert secret not in written
    with seen.lock:
        sent = [headers for path, _, _, headers in seen.calls if path == "/v1/responses"]
    assert sent[0]["Authorization"].startswith("Basic ")  # the URL's credentials were used, not stored


@pytest.mark.parametrize("tail", [f"/?api_key={SECRET}", f"?key={SECRET}", f"/#{SECRET}"])
def test_an_upstream_url_with_a_query_is_refused_without_repeating_it(tail):
    with pytest.raises(ValueError, match="must not have a query") as refused:
        parse_upstream(f"http://127.0.0.1:8080{tail}")
    assert SECRET not in str(refused.value) and "X-Api-Key" in str(refused.value)
    result = CliRunner().invoke(main, ["serve", "--upstream", f"http://127.0.0.1:8080{tail}"])
    assert result.exit_code == 2 and "must not have a query" in result.output and SECRET not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_slug_names_are_readable_and_stable():
    sent = Sent("POST", "/v1/responses", "", _request("text-cut-8", True), (), None)
    assert slug_name(sent) == slug_name(Sent("POST", "/v1/responses", "", _request("text-cut-8", False), (), None))
    assert slug_name(sent).startswith("count-from-1-to-200-separated-by-spaces-8-")
    other = Sent("POST", "/v1/responses", "", json.dumps({**SEED, "temperature": 0.5}).encode(), (), None)
    assert slug_name(other) != slug_name(sent)


# --- names the pytest plugin serves beside the record directory (issue 55, item 11) ---------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_bundled_name_is_never_recorded_into_even_when_the_bundled_set_is_not_served(
    upstream, proxy, tmp_path, stream
):
    """serve --upstream serves no bundled recording, yet the pytest plugin serves the bundled set
    beside the record directory: a text-cut-8.yaml there would stop it starting. Refused, as a
    name another loaded cassette holds is, and nothing is forwarded or written."""
    seen = Seen()
    mock = proxy(upstream(seen=seen).url)
    header = {"X-Mockllama-Scenario": "text-cut-8"}
    status, _, body = call(mock.url, "POST", "/fixed/v1/responses", _request("text-cut-8", stream), header)
    assert status == 400, body
    message = json.loads(body)["error"]["message"]
    assert "'text-cut-8'" in message and "bundled" in message and "Choose another name" in message
    assert _written(tmp_path / "recorded") == [] and seen.paths() == []


def test_a_slug_passes_over_a_bundled_name(proxy, tmp_path, monkeypatch):
    """A name made from the prompt that a bundled recording holds gets -2, as for any taken name."""
    monkeypatch.setattr("mockllama.upstream.scenario_names.slug_name", lambda sent: "text-cut-8")
    recorder = proxy("http://127.0.0.1:9").app[RECORDER]
    sent = Sent("POST", "/v1/responses", "", b"{}", (), None)
    assert recorder.target_name(sent) == "text-cut-8-2"
