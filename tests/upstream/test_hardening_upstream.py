"""`serve --upstream ... --record-to DIR` against hostile upstreams (issue 27).

The rule these tests hold: whatever an upstream sends, the record directory still loads, a good
recording is never lost, and the client gets the upstream's reply as it came or a 502 that says
why nothing was recorded.

Every hostile upstream here is a test double of llama-server b11434: mockllama replaying the
bundled real recordings (so /health, /props, /v1/models and the good replies are llama-server's
own bytes), with one reply replaced by something a broken server or a proxy in front of it could
send. tests/upstream/test_record_on_miss.py covers the well-behaved upstream.
"""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import os
import stat
import time
from pathlib import Path

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllama.app import ServeOptions, create_app
from mockllama.recordings.cassettes import load_cassette, load_scenarios
from mockllama.server.background import BackgroundServer
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.flight import Sent
from mockllama.upstream.record_mode import parse_record_mode
from mockllama.upstream.record_on_miss import RecordOnMiss
from mockllama.upstream.scenario_names import slug_name
from support.doubles.llama_server import llama_server_with
from support.httpkit import call, sse_pairs
from support.recordings import SCENARIOS
from support.waiting import wait_for

RESPONSES, CHAT = "/v1/responses", "/v1/chat/completions"


def recorded(name: str, path: str, stream: bool):
    return SCENARIOS[name].find("POST", path, stream)


def request_bytes(name: str, stream: bool, path: str = RESPONSES) -> bytes:
    """The exact bytes a client sent when the bundled scenario was recorded."""
    return json.dumps(recorded(name, path, stream).request_json).encode()


def stream_of(blocks: list[bytes]):
    """A handler part: send ``blocks`` as an event stream, each as it comes, then end cleanly."""

    async def send(request):
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for block in blocks:
            await response.write(block)
        await response.write_eof()
        return response

    return send


@pytest.fixture
def servers():
    running = []

    def start(app: web.Application) -> BackgroundServer:
        running.append(BackgroundServer(app).start())
        return running[-1]

    yield start
    for server in reversed(running):
        server.stop()


@pytest.fixture
def record_dir(tmp_path) -> Path:
    return tmp_path / "recorded"


@pytest.fixture
def proxy(servers, record_dir):
    """``mockllama serve --upstream URL --record-to DIR`` in this process."""

    def start(upstream_url: str, mode: str = "new", scenarios=None, timeout: float = 30.0, **options):
        recording = RecordOnMiss(
            parse_upstream(upstream_url, timeout),
            record_dir,
            parse_record_mode(mode),
            **{k: options.pop(k) for k in list(options) if k in ("max_reply_bytes",)},
        )
        return servers(
            create_app({} if scenarios is None else dict(scenarios), ServeOptions(**options), record_on_miss=recording)
        )

    return start


def settle(server: BackgroundServer, seconds: float = 10) -> None:
    """Wait until no recording is in progress (a buggy client has its reply before the write)."""
    from mockllama.upstream.proxy import RECORDER

    assert wait_for(lambda: not server.app[RECORDER].in_flight, seconds)


def loads(directory: Path) -> dict:
    """What `mockllama serve --cassettes DIR` (and the same --record-to at the next start) loads:
    no directory, or one that holds no cassette, is an empty record directory."""
    if not directory.exists() or not any(p.suffix == ".yaml" for p in directory.rglob("*")):
        return {}
    return load_scenarios([directory])


def files(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*")) if directory.exists() else []


# --- 1. One odd upstream reply must never make the record directory unloadable -----------------------


def _gzipped(path: str):
    def answer(request, body):
        # mtime=0: the same bytes on every call. gzip's header holds the time in seconds, and the
        # test compares two calls, which straddled a second once (CI, 2026-12-02).
        return web.Response(
            body=gzip.compress(recorded("text-cut-8", path, False).body, mtime=0),
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )

    return answer


def _events_without_terminal():
    return [event.raw for event in recorded("text-cut-8", RESPONSES, True).events[:-1]]


def _events_with_invalid_utf8(path: str):
    events = [event.raw for event in recorded("text-cut-8", path, True).events]
    return [events[0], b'data: {"bad": "\xff\xfe"}\n\n', *events[1:]]


ODD_REPLIES = {
    # name: (request path, stream flag, the double's answer to that request)
    "html": (
        RESPONSES,
        False,
        lambda request, body: web.Response(text="<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
    ),
    "not-json": (
        RESPONSES,
        False,
        lambda request, body: web.Response(body=b'{"id": ', content_type="application/json"),
    ),
    "json-of-another-shape": (RESPONSES, False, lambda request, body: web.json_response({"hello": "world"})),
    "gzip": (RESPONSES, False, _gzipped(RESPONSES)),
    "chat-gzip": (CHAT, False, _gzipped(CHAT)),  # it would load: refused for its encoding alone
    "stream-without-response.completed": (
        RESPONSES,
        True,
        lambda request, body: stream_of(_events_without_terminal())(request),
    ),
    "responses-stream-not-utf8": (
        RESPONSES,
        True,
        lambda request, body: stream_of(_events_with_invalid_utf8(RESPONSES))(request),
    ),
    "chat-stream-not-utf8": (CHAT, True, lambda request, body: stream_of(_events_with_invalid_utf8(CHAT))(request)),
}


def odd_upstream(kind: str) -> web.Application:
    path, stream, answer = ODD_REPLIES[kind]

    async def replace(request, body):
        if request.path == path and isinstance(body, dict) and body.get("stream", False) is stream:
            reply = answer(request, body)
            return await reply if hasattr(reply, "__await__") else reply
        return None

    return llama_server_with(replace)


@pytest.mark.parametrize("kind", list(ODD_REPLIES))
def test_buggy_gets_the_odd_reply_as_it_came_and_the_directory_still_loads(servers, proxy, record_dir, kind):
    path, stream, _ = ODD_REPLIES[kind]
    up = servers(odd_upstream(kind))
    mock = proxy(up.url)
    sent = request_bytes("text-cut-8", stream, path)
    direct = call(up.url, "POST", path, sent)
    status, headers, body = call(mock.url, "POST", "/buggy" + path, sent)
    assert (status, body) == (direct[0], direct[2])  # the upstream's reply, byte for byte
    assert headers.get("Content-Encoding") == direct[1].get("Content-Encoding")
    settle(mock)
    assert loads(record_dir) == {}  # nothing was recorded, and nothing unloadable was left
    assert [name for name in files(record_dir) if name.endswith(".yaml")] == []


@pytest.mark.parametrize("kind", [kind for kind, (path, _, _) in ODD_REPLIES.items() if path == RESPONSES])
def test_fixed_gets_a_502_that_says_why_nothing_was_recorded(servers, proxy, record_dir, kind):
    _, stream, _ = ODD_REPLIES[kind]
    mock = proxy(servers(odd_upstream(kind)).url)
    status, headers, body = call(mock.url, "POST", "/fixed/v1/responses", request_bytes("text-cut-8", stream))
    error = json.loads(body)["error"]
    assert (status, error["code"], error["type"]) == (502, 502, "unavailable_error")
    assert "not recorded" in error["message"] and error["message"].startswith("mockllama: ")
    assert headers["Content-Type"].startswith("application/json")
    assert loads(record_dir) == {}


def test_a_bad_reply_is_never_merged_into_a_good_recording_of_the_same_scenario(servers, proxy, record_dir):
    up = servers(odd_upstream("stream-without-response.completed"))  # the plain reply is llama-server's own
    mock = proxy(up.url)
    header = {"X-Mockllama-Scenario": "mine"}
    status, _, good = call(mock.url, "POST", "/fixed/v1/responses", request_bytes("text-cut-8", False), header)
    assert status == 200 and json.loads(good)["status"] == "incomplete"
    cassette = record_dir / "mine.yaml"
    before = cassette.read_bytes()
    status, _, _ = call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", True), header)
    assert status == 200
    settle(mock)
    assert cassette.read_bytes() == before  # the good recording is untouched
    assert [i.stream for i in load_cassette(cassette).interactions] == [False, False]
    assert list(loads(record_dir)) == ["mine"]
    status, _, again = call(mock.url, "POST", "/fixed/v1/responses", request_bytes("text-cut-8", False), header)
    assert (status, again) == (200, good)


def test_a_recording_that_loads_is_served_at_once_and_at_the_next_start(servers, proxy, record_dir):
    """The check before the rename lets a good reply through, and what is served is what was written."""
    mock = proxy(servers(odd_upstream("html")).url)  # only the plain Responses reply is odd
    status, headers, body = call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", True))
    assert status == 200
    settle(mock)
    (name,) = loads(record_dir)
    assert name == headers["X-Mockllama-Scenario"]
    assert call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", True))[2] == body
    with BackgroundServer(create_app(loads(record_dir))) as later:
        assert call(later.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", True))[2] == body


# --- 3. Replies are capped under serve --upstream, as `record` caps them ------------------------------


class Endless:
    """A test double of a llama-server gone wrong: /v1/responses answers 200 and never stops
    sending, as fast as the socket takes it. ``framed``: SSE blocks; else one line with no end.
    ``sent`` counts the bytes it got out, ``stopped`` is set when the reader went away."""

    def __init__(self, framed: bool = True, stream: bool = True):
        self.framed, self.stream, self.sent = framed, stream, 0
        self.stopped = False

    def app(self) -> web.Application:
        async def replace(request, body):
            if request.path != RESPONSES:
                return None
            response = web.StreamResponse(
                headers={"Content-Type": "text/event-stream" if self.stream else "application/json"}
            )
            await response.prepare(request)
            block = (
                b'data: {"type": "response.output_text.delta", "delta": "1, "}\n\n' if self.framed else b"1, " * 1000
            )
            try:
                while self.sent < 64 * CAP:  # a bound for the test itself, far past the cap
                    await response.write(block)
                    self.sent += len(block)
            except (ConnectionError, RuntimeError):
                self.stopped = True
            return response

        return llama_server_with(replace)


CAP = 256 * 1024


@pytest.mark.parametrize("framed", [True, False], ids=["sse-blocks", "no-blank-line"])
def test_an_endless_stream_is_cut_at_the_cap_and_nothing_is_written(servers, proxy, record_dir, framed):
    endless = Endless(framed=framed)
    mock = proxy(servers(endless.app()).url, max_reply_bytes=CAP)
    with pytest.raises((http.client.HTTPException, ConnectionError)):  # the stream stops: its head went out
        call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", True))
    assert wait_for(lambda: endless.stopped)  # mockllama stopped reading, so the upstream stopped
    settle(mock)
    assert files(record_dir) == []


@pytest.mark.parametrize("behaviour", ["buggy", "fixed"])
def test_a_plain_reply_over_the_cap_gets_a_502_naming_the_option(servers, proxy, record_dir, behaviour):
    endless = Endless(framed=False, stream=False)
    mock = proxy(servers(endless.app()).url, max_reply_bytes=CAP)
    status, _, body = call(mock.url, "POST", f"/{behaviour}/v1/responses", request_bytes("text-cut-8", False))
    error = json.loads(body)["error"]
    assert (status, error["type"]) == (502, "unavailable_error")
    assert f"more than {CAP} bytes" in error["message"] and "--max-reply-bytes" in error["message"]
    assert "nothing was recorded" in error["message"].lower()
    assert wait_for(lambda: endless.stopped)
    settle(mock)
    assert files(record_dir) == []


def test_a_twin_over_the_cap_records_nothing(servers, proxy, record_dir):
    async def replace(request, body):
        if request.path == CHAT:
            return web.json_response({"padding": "x" * (2 * CAP)})
        return None

    mock = proxy(servers(llama_server_with(replace)).url, max_reply_bytes=CAP)
    status, _, body = call(mock.url, "POST", "/fixed/v1/responses", request_bytes("text-cut-8", False))
    assert status == 502 and f"more than {CAP} bytes" in json.loads(body)["error"]["message"]
    assert files(record_dir) == []


def test_the_cap_is_64_mib_by_default_and_serve_has_an_option_for_it(tmp_path):
    from click.testing import CliRunner

    from mockllama.cli import main
    from mockllama.recordings.record import DEFAULT_MAX_REPLY_BYTES

    assert DEFAULT_MAX_REPLY_BYTES == 64 * 1024 * 1024
    assert RecordOnMiss(parse_upstream("http://127.0.0.1:8080"), tmp_path).max_reply_bytes == DEFAULT_MAX_REPLY_BYTES
    help_text = CliRunner().invoke(main, ["serve", "--help"]).output
    assert "--max-reply-bytes" in help_text and str(DEFAULT_MAX_REPLY_BYTES) in help_text
    refused = CliRunner().invoke(main, ["serve", "--max-reply-bytes", "1000"])
    assert refused.exit_code == 2 and "--upstream" in refused.output


# --- 5. --cors-origin and --allowed-host refuse what a page would make the upstream do ---------------


class Heard:
    """The headers each POST reached the upstream double with."""

    def __init__(self):
        self.posts: list[dict] = []

    def app(self) -> web.Application:
        async def replace(request, body):
            self.posts.append({"path": request.path, "raw_path": request.raw_path, **request.headers})

        return llama_server_with(replace)


# What a page must not make the upstream do: (serve options, the page's request headers, a client's)
REFUSED_PAGES = {
    # fetch() sends a text/plain POST with no preflight
    "cors-origin": (
        {"cors_origins": ("http://localhost:5173",)},
        {"Origin": "http://evil.test", "Content-Type": "text/plain"},
        {"Origin": "http://localhost:5173"},
    ),
    # a page that reached the server under its own name (DNS rebinding)
    "allowed-host": ({"allowed_hosts": ("localhost",)}, {"Host": "rebound.example"}, {"Host": "localhost"}),
}


@pytest.mark.parametrize("kind", list(REFUSED_PAGES))
def test_a_request_a_page_must_not_make_never_reaches_the_upstream(servers, proxy, record_dir, kind):
    options, page, client = REFUSED_PAGES[kind]
    heard = Heard()
    mock = proxy(servers(heard.app()).url.replace("http://", "http://bob:planted-pw@"), **options)
    status, _, body = call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", False), page)
    assert status == 403 and json.loads(body)["error"]["type"] == "permission_error"
    settle(mock)
    assert heard.posts == [] and files(record_dir) == []
    status, _, _ = call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", False), client)
    settle(mock)
    assert status == 200 and [post["path"] for post in heard.posts] == [RESPONSES, CHAT]  # the request, its twin


def test_origin_is_never_forwarded_upstream(servers, proxy):
    heard = Heard()
    mock = proxy(servers(heard.app()).url)
    status, _, _ = call(
        mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", False), {"Origin": "http://localhost:5173"}
    )
    assert status == 200
    settle(mock)
    assert heard.posts and all("Origin" not in headers for headers in heard.posts)


# --- 6. A recording is never written under a name another loaded directory already uses ------------


def _record_into(servers, directory: Path, upstream_url: str, body: bytes, headers=None) -> str:
    """Record one request into ``directory`` with a proxy of its own; the scenario's name."""
    options = RecordOnMiss(parse_upstream(upstream_url), directory)
    mock = servers(create_app({}, record_on_miss=options))
    status, reply_headers, _ = call(mock.url, "POST", "/fixed/v1/responses", body, headers)
    assert status == 200
    return reply_headers["X-Mockllama-Scenario"]


@pytest.mark.parametrize("mode", ["all", "new"])
def test_a_slug_taken_by_another_directory_is_not_reused(servers, proxy, record_dir, tmp_path, mode):
    up = servers(create_app(SCENARIOS))
    earlier = tmp_path / "earlier"
    taken = _record_into(servers, earlier, up.url, request_bytes("text-cut-8", False))
    # all: the same request again; new: its streamed variant, which the earlier recording lacks
    stream = mode == "new"
    mock = proxy(up.url, mode=mode, scenarios=load_scenarios([earlier]))
    status, headers, _ = call(mock.url, "POST", "/fixed/v1/responses", request_bytes("text-cut-8", stream))
    assert status == 200 and headers["X-Mockllama-Selected-By"] == "upstream"
    name = headers["X-Mockllama-Scenario"]
    assert name != taken and name.startswith(taken)
    both = load_scenarios([earlier, record_dir])  # the next start: serve --cassettes earlier --record-to DIR
    assert sorted(both) == sorted([taken, name])
    assert [i.stream for i in both[name].interactions] == [stream, stream]
    status, headers, _ = call(mock.url, "POST", "/fixed/v1/responses", request_bytes("text-cut-8", stream))
    assert headers["X-Mockllama-Scenario"] == name  # the same request keeps its name


def test_a_scenario_header_naming_another_directorys_recording_is_still_refused(servers, proxy, record_dir, tmp_path):
    up = servers(create_app(SCENARIOS))
    earlier = tmp_path / "earlier"
    _record_into(servers, earlier, up.url, request_bytes("text-cut-8", False), {"X-Mockllama-Scenario": "mine"})
    mock = proxy(up.url, mode="all", scenarios=load_scenarios([earlier]))
    status, _, body = call(
        mock.url, "POST", "/fixed/v1/responses", request_bytes("text-cut-8", True), {"X-Mockllama-Scenario": "mine"}
    )
    assert status == 400 and "never recorded over" in json.loads(body)["error"]["message"]
    assert files(record_dir) == []


def test_a_name_taken_in_a_subdirectory_of_the_record_directory_is_not_reused(servers, proxy, record_dir):
    up = servers(create_app(SCENARIOS))
    taken = _record_into(servers, record_dir / "sub", up.url, request_bytes("text-cut-8", False))
    mock = proxy(up.url, mode="all", scenarios=load_scenarios([record_dir]))
    status, headers, _ = call(mock.url, "POST", "/fixed/v1/responses", request_bytes("text-cut-8", False))
    assert status == 200 and headers["X-Mockllama-Scenario"] != taken
    assert sorted(load_scenarios([record_dir])) == sorted([taken, headers["X-Mockllama-Scenario"]])


# --- 7. A lone surrogate in a request on a miss ----------------------------------------------------


@pytest.mark.parametrize("behaviour", ["buggy", "fixed"])
@pytest.mark.parametrize(
    ("raw", "status", "replayed_by"),
    [
        # as a JSON escape: "model": "text-cut-8" selects llama-server's recorded reply
        (b'{"model": "text-cut-8", "input": "Count \\ud800 to 200.", "max_output_tokens": 8}', 200, "match"),
        # as CESU-8 bytes: ill-formed UTF-8, which llama-server answers with a 400 parse error
        # (tests/live/test_live_hardening.py), replayed from the bytes recorded
        (
            b'{"model": "text-cut-8", "input": "Count \xed\xa0\x80 to 200.", "max_output_tokens": 8}',
            400,
            "recorded-bytes",
        ),
    ],
    ids=["escaped", "cesu-8"],
)
def test_a_lone_surrogate_on_a_miss_is_forwarded_and_recorded(
    servers, proxy, record_dir, behaviour, raw, status, replayed_by
):
    up = servers(create_app(SCENARIOS))
    mock = proxy(up.url)
    got, headers, body = call(mock.url, "POST", f"/{behaviour}/v1/responses", raw)
    assert got == status, body
    assert headers["X-Mockllama-Selected-By"] == "upstream"
    settle(mock)
    (scenario,) = loads(record_dir).values()
    # with its twin; a request refused as unreadable has none to send
    assert [i.path for i in scenario.interactions] == ([RESPONSES, CHAT] if status == 200 else [RESPONSES])
    assert scenario.interactions[0].request_raw == raw  # the exact bytes sent
    again = call(mock.url, "POST", f"/{behaviour}/v1/responses", raw)
    assert (again[0], again[1]["X-Mockllama-Selected-By"]) == (status, replayed_by)


# --- 8. Hop-by-hop headers stay on the client's hop (RFC 9110 section 7.6.1) ---------------------------


def test_hop_by_hop_headers_are_not_forwarded(servers, proxy):
    heard = Heard()
    mock = proxy(servers(heard.app()).url)
    sent = {
        "Connection": "keep-alive, X-Hop-Only",
        "X-Hop-Only": "for mockllama alone",
        "Proxy-Authorization": "Basic cHJveHk6c2VjcmV0",
        "Expect": "100-continue",
        "X-Kept": "yes",
    }
    status, _, _ = call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", False), sent)
    assert status == 200
    settle(mock)
    first = {name.lower(): value for name, value in heard.posts[0].items()}
    assert first["x-kept"] == "yes"  # an end-to-end header goes through
    for name in ("x-hop-only", "proxy-authorization", "expect"):
        assert name not in first, name
    assert first.get("connection", "").lower() in ("", "close", "keep-alive")  # aiohttp's own, not the client's


# --- 9. Secret header values are scrubbed; a challenge is not a secret ----------------------------


KEY = "sk-live-planted0123456789"


def test_a_secret_in_a_reply_header_value_is_never_written(servers, proxy, record_dir):
    async def plant(request, response):
        response.headers["X-Debug"] = f"Bearer {KEY}"
        response.headers["X-Forwarded-For-Key"] = "Basic YWRtaW46cGxhbnRlZA=="  # named like a secret too
        response.headers["X-Upstream"] = "http://admin:planted-pw@10.0.0.5:8080/v1"
        response.headers["X-Plain-Key-Shape"] = f"request {KEY} done"

    app = create_app(SCENARIOS)
    app.on_response_prepare.append(plant)
    mock = proxy(servers(app).url)
    status, headers, _ = call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", True))
    assert status == 200
    live = str(dict(headers))
    settle(mock)
    written = "".join(p.read_text() for p in record_dir.iterdir())
    assert "X-Debug" in written and "X-Upstream" in written  # the headers are kept, their secrets not
    for secret in (KEY, "YWRtaW46cGxhbnRlZA", "planted-pw", "admin:"):
        assert secret not in written, secret
        assert secret not in live, secret  # the live reply sends what a replay will send


def test_www_authenticate_is_relayed_recorded_and_replayed(servers, proxy, record_dir):
    """A test double of llama-server behind a proxy that asks for credentials: llama-server's own
    recorded 401, with the challenge such a proxy adds."""
    refused = next(i for i in SCENARIOS["server-errors"].interactions if i.status == 401)
    challenge = 'Bearer realm="llama", error="invalid_token"'

    async def replace(request, body):
        if request.path == RESPONSES:
            return web.Response(
                status=401, body=refused.body, content_type="application/json", headers={"WWW-Authenticate": challenge}
            )
        return None

    mock = proxy(servers(llama_server_with(replace)).url)
    for answered_by in ("upstream", "match"):
        status, headers, body = call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", False))
        assert (status, body, headers["X-Mockllama-Selected-By"]) == (401, refused.body, answered_by)
        assert headers["WWW-Authenticate"] == challenge
        settle(mock)
    (scenario,) = loads(record_dir).values()
    assert ("WWW-Authenticate", challenge) in scenario.interactions[0].headers


# --- 10. Temporary files: unpredictable names, no link followed ------------------------------------


def _plant_links(directory: Path, names: list[str], victim: Path) -> list[Path]:
    """Links where b518762 put its temporary files: .NAME.partial-PID, this process's id."""
    directory.mkdir(parents=True, exist_ok=True)
    links = [directory / f".{name}.partial-{os.getpid()}" for name in names]
    for link in links:
        link.symlink_to(victim)
    return links


def test_a_planted_link_at_a_guessable_temporary_name_is_never_written_through(servers, proxy, record_dir, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    body = request_bytes("text-cut-8", False)
    name = slug_name(Sent("POST", RESPONSES, "", body, (), None))
    _plant_links(record_dir, [f"{name}.yaml", "provenance.json"], victim)
    mock = proxy(servers(create_app(SCENARIOS)).url)
    status, _, _ = call(mock.url, "POST", "/fixed/v1/responses", body)
    assert status == 200
    assert victim.read_text() == "precious\n"
    assert load_cassette(record_dir / f"{name}.yaml").interactions
    assert json.loads((record_dir / "provenance.json").read_text())["scenarios"]
    leftovers = [p.name for p in record_dir.iterdir() if ".partial" in p.name and not p.is_symlink()]
    assert leftovers == []


def test_mockllama_record_never_writes_through_a_planted_link(servers, tmp_path):
    import asyncio

    from mockllama.recordings.catalogue import load_catalogue
    from mockllama.recordings.record import probe, record_scenario, write_provenance

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "out"
    _plant_links(out, ["text-cut-8.yaml", "provenance.json"], victim)
    up = servers(create_app(SCENARIOS))
    entry = next(entry for entry in load_catalogue() if entry.name == "text-cut-8")

    async def run():
        info = await probe(up.url, 30, {})
        outcome = await record_scenario(entry, up.url, out, 30, {})
        write_provenance(out, up.url, info, [outcome], "default", None)

    asyncio.run(run())
    assert victim.read_text() == "precious\n"
    assert load_cassette(out / "text-cut-8.yaml").interactions


def test_temporary_names_differ_and_their_directory_is_private(tmp_path):
    from mockllama.recordings.record import partial_file

    with partial_file(tmp_path / "a.yaml") as first, partial_file(tmp_path / "a.yaml") as second:
        assert first != second
        assert first.parent.parent == tmp_path
        assert stat.S_IMODE(first.parent.stat().st_mode) == 0o700
        assert first.suffix not in (".yaml", ".yml")  # a leftover is never loaded as a cassette
    assert list(tmp_path.iterdir()) == []


# --- 11. The query goes upstream as the client wrote it -------------------------------------------


@pytest.mark.parametrize("query", ["a=%23frag&b=%26c", "q=%20spaced+plus&x=%2F%3F%25", "flag&empty=&k=v=w"])
def test_the_raw_query_is_forwarded(servers, proxy, query):
    heard = Heard()
    mock = proxy(servers(heard.app()).url)
    status, _, _ = call(mock.url, "POST", f"/buggy/v1/responses?{query}", request_bytes("text-cut-8", False))
    assert status == 200
    settle(mock)
    assert heard.posts[0]["raw_path"] == f"/v1/responses?{query}"


# --- 12. Faults are checked and applied on a miss as on a hit ------------------------------------------


def _cut_short(url: str, path: str, body: bytes, headers: dict) -> bool:
    """Whether the reply's body was cut off (the connection dropped before its end)."""
    try:
        call(url, "POST", path, body, headers)
    except (http.client.HTTPException, ConnectionError):
        return True
    return False


@pytest.mark.parametrize("how", ["header", "serve --fault"])
def test_a_fault_applies_on_a_miss_and_the_recording_is_whole(servers, proxy, record_dir, how):
    mock = (
        proxy(servers(create_app(SCENARIOS)).url)
        if how == "header"
        else proxy(servers(create_app(SCENARIOS)).url, faults={"*": "disconnect=0"})
    )
    fault = {"X-Mockllama-Fault": "disconnect=0"} if how == "header" else {}
    body = request_bytes("text-cut-8", False)
    assert _cut_short(mock.url, "/buggy/v1/responses", body, fault)  # b518762: the whole reply, on a miss
    settle(mock)
    assert _cut_short(mock.url, "/buggy/v1/responses", body, fault)  # the same on the hit that follows
    (scenario,) = loads(record_dir).values()  # the fault belongs to the request, not to the recording
    assert scenario.interactions[0].body == recorded("text-cut-8", RESPONSES, False).body


def test_a_stream_fault_on_a_miss_cuts_the_stream_as_on_a_hit(servers, proxy):
    mock = proxy(servers(create_app(SCENARIOS)).url)
    fault = {"X-Mockllama-Fault": "truncate-stream=2"}
    first = call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", True), fault)
    settle(mock)
    second = call(mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", True), fault)
    assert first[0] == second[0] == 200
    assert first[1]["X-Mockllama-Fault"] == "truncate-stream=2"
    assert first[2] == second[2] and len(sse_pairs(first[2])) == 2


@pytest.mark.parametrize("fault", ["bogus", "disconnect=x", "status=299"])
def test_an_invalid_fault_on_a_miss_is_a_400_and_nothing_is_forwarded(servers, proxy, record_dir, fault):
    heard = Heard()
    mock = proxy(servers(heard.app()).url)
    status, _, body = call(
        mock.url, "POST", "/buggy/v1/responses", request_bytes("text-cut-8", False), {"X-Mockllama-Fault": fault}
    )
    assert status == 400 and "X-Mockllama-Fault" in json.loads(body)["error"]["message"]
    settle(mock)
    assert heard.posts == [] and files(record_dir) == []


# --- 17. An upstream stream framed with CRLF is relayed block by block --------------------------------


PAUSE = 1.5


def crlf_upstream() -> web.Application:
    """A test double of a server that frames SSE with CRLF (the SSE spec allows CR, LF and CRLF;
    proxies such as some Node servers send CRLF): llama-server's recorded chat stream, reframed,
    with a pause after the first block, as a model generating."""
    events = [event.raw.replace(b"\n", b"\r\n") for event in recorded("text-cut-8", CHAT, True).events]

    async def replace(request, body):
        if request.path != CHAT:
            return None
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(events[0])
        await asyncio.sleep(PAUSE)
        for event in events[1:]:
            await response.write(event)
        await response.write_eof()
        return response

    return llama_server_with(replace)


def test_a_crlf_framed_stream_is_relayed_as_it_arrives(servers, proxy, record_dir):
    mock = proxy(servers(crlf_upstream()).url)
    connection = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=30)
    started = time.monotonic()
    connection.request(
        "POST",
        "/buggy/v1/chat/completions",
        body=request_bytes("text-cut-8", True, CHAT),
        headers={"Content-Type": "application/json"},
    )
    response = connection.getresponse()
    first = response.read1(65536)
    first_at = time.monotonic() - started
    rest = response.read()
    connection.close()
    assert first.endswith(b"\r\n\r\n") and first_at < PAUSE / 2, (first_at, first)  # b518762: after the pause
    expected = b"".join(event.raw.replace(b"\n", b"\r\n") for event in recorded("text-cut-8", CHAT, True).events)
    assert first + rest == expected  # and not a byte changed
    settle(mock)
    status, _, replayed = call(mock.url, "POST", "/buggy/v1/chat/completions", request_bytes("text-cut-8", True, CHAT))
    assert (status, replayed) == (200, expected)


@pytest.mark.parametrize("framing", [b"\n\n", b"\r\n\r\n", b"\r\r", b"\r\n\n"])
def test_every_blank_line_of_the_sse_spec_ends_a_block(framing):
    from mockllama.upstream.forwarding import block_end

    body = b"data: 1" + framing + b"data: 2" + framing
    assert block_end(bytearray(body)) == len(b"data: 1" + framing)
    assert block_end(bytearray(b"data: 1\r\n\r")) == -1  # the \n may be on its way: wait for it
    assert block_end(bytearray(b"data: 1\r\n")) == -1


# --- Issue 47 item 8: an upstream's 1xx as the final reply is a 502, never recorded ---------------


@pytest.mark.parametrize("behaviour", ["buggy", "fixed"])
@pytest.mark.parametrize("path", [RESPONSES, CHAT])
def test_an_upstream_101_switching_protocols_is_a_502_and_never_recorded(servers, proxy, record_dir, behaviour, path):
    """No client asked to upgrade, so a 101 is not llama-server's (RFC 9110 section 15.2); recorded,
    every replay of it would leave its client waiting for the reply after it."""

    async def replace(request, body):
        if request.path == path:
            return web.Response(status=101, headers={"Connection": "Upgrade", "Upgrade": "websocket"})
        return None

    mock = proxy(servers(llama_server_with(replace)).url)
    status, _, body = call(mock.url, "POST", f"/{behaviour}{path}", request_bytes("text-cut-8", False, path))
    error = json.loads(body)["error"]
    assert (status, error["code"], error["type"]) == (502, 502, "unavailable_error")
    assert "101 Switching Protocols" in error["message"] and "nothing was recorded" in error["message"]
    settle(mock)
    assert files(record_dir) == []


# --- Issue 47 item 11: a twin that failed decides nothing ------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_twin_that_failed_is_recorded_and_fixed_keeps_the_reply_as_recorded(servers, proxy, record_dir, stream):
    """text-exact-limit finished in exactly 8 of 8 tokens: its twin's 500 says nothing of how, and
    usage at the limit would call it cut. The recording keeps what happened; fixed says why it
    kept the reply."""

    async def replace(request, body):
        if request.path == CHAT:
            return web.json_response({"error": {"code": 500, "message": "boom", "type": "server_error"}}, status=500)
        return None

    mock = proxy(servers(llama_server_with(replace)).url)
    for answered_by in ("upstream", "match"):
        status, headers, body = call(mock.url, "POST", "/fixed/v1/responses", request_bytes("text-exact-limit", stream))
        assert (status, headers["X-Mockllama-Selected-By"]) == (200, answered_by)
        assert headers["X-Mockllama-Decided-By"] == "chat-twin failed (HTTP 500): kept as recorded"
        final = sse_pairs(body)[-1] if stream else ("", {"response": json.loads(body)})
        assert final[1]["response"]["status"] == "completed"
    (scenario,) = loads(record_dir).values()
    assert [(i.path, i.status) for i in scenario.interactions] == [(RESPONSES, 200), (CHAT, 500)]


# --- The fuzz: random upstream replies never leave a record directory that fails to load ------------

REAL_REPLIES = [i for name in ("text-cut-8", "tool-cut-20", "errors") for i in SCENARIOS[name].interactions]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)


def _mutated(body: bytes, draw) -> bytes:
    """llama-server's own bytes, broken the ways a network, a proxy or a buggy server breaks them."""
    how = draw(st.sampled_from(["as-is", "cut", "byte", "drop-events", "crlf", "gzip", "field"]))
    if how == "cut":
        return body[: draw(st.integers(0, len(body)))]
    if how == "byte":
        at = draw(st.integers(0, len(body)))
        return body[:at] + bytes([draw(st.integers(0, 255))]) + body[at + 1 :]
    if how == "drop-events":
        from mockllama.wire.sse import split_blocks

        blocks = split_blocks(body)
        kept = draw(st.lists(st.integers(0, max(len(blocks) - 1, 0)), unique=True, max_size=len(blocks)))
        return b"".join(blocks[index] for index in sorted(kept))
    if how == "crlf":
        return body.replace(b"\n", b"\r\n")
    if how == "gzip":
        return gzip.compress(body)
    if how == "field":
        try:
            parsed = json.loads(body)
        except ValueError:
            return body
        if isinstance(parsed, dict) and parsed:
            parsed[draw(st.sampled_from(sorted(parsed)))] = draw(JSON_VALUES)
        return json.dumps(parsed).encode()
    return body


@st.composite
def upstream_replies(draw):
    """(status, headers, body) for one upstream reply, or None: let llama-server's recording answer."""
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    source = draw(st.sampled_from(REAL_REPLIES))
    body = draw(
        st.one_of(st.just(source.body), st.binary(max_size=200), JSON_VALUES.map(lambda v: json.dumps(v).encode()))
    )
    body = _mutated(body, draw)
    headers = {
        "Content-Type": draw(
            st.sampled_from(
                [
                    "application/json; charset=utf-8",
                    "text/event-stream",
                    "text/html",
                    "text/plain",
                    "application/octet-stream",
                ]
            )
        )
    }
    encoding = draw(st.sampled_from([None, None, "gzip", "identity", "br"]))
    if encoding:
        headers["Content-Encoding"] = encoding
    extra = draw(
        st.dictionaries(
            st.from_regex(r"X-[A-Za-z0-9-]{1,12}", fullmatch=True),
            st.text(alphabet="abcXYZ019 =;,/:-_", max_size=30),
            max_size=3,
        )
    )
    status = draw(st.sampled_from([200, 200, 200, 201, 400, 401, 404, 500, 503, 299, 418]))
    return status, {**extra, **headers}, body


def test_random_upstream_replies_never_leave_a_record_directory_that_fails_to_load(tmp_path):
    """The upstream is a test double of llama-server b11434 (its recordings, replayed) whose
    /v1/responses and /v1/chat/completions replies hypothesis draws: llama-server's own bytes cut,
    altered, reframed, gzipped, or replaced by random bytes or JSON, under random statuses and
    headers. Whatever comes, the record directory loads as `serve --cassettes DIR` loads it, and
    no client gets mockllama's internal error."""
    replies: dict[str, object] = {}

    async def replace(request, body):
        drawn = replies.get(request.path)
        if drawn is None:
            return None
        status, headers, raw = drawn
        return web.Response(status=status, body=raw, headers=headers)

    record_dir = tmp_path / "recorded"
    with BackgroundServer(llama_server_with(replace)) as up:
        options = RecordOnMiss(parse_upstream(up.url), record_dir, parse_record_mode("all"))
        with BackgroundServer(create_app({}, record_on_miss=options)) as mock:
            answered = []

            @settings(
                max_examples=300,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
            )
            @given(
                main=upstream_replies(),
                twin=upstream_replies(),
                behaviour=st.sampled_from(["buggy", "fixed", "spec"]),
                request=st.sampled_from(
                    [
                        (name, stream, path)
                        for name in ("text-cut-8", "tool-cut-20")
                        for stream in (False, True)
                        for path in (RESPONSES, CHAT)
                    ]
                ),
                scenario=st.sampled_from([None, None, "shared", "other"]),
            )
            def exchange(main, twin, behaviour, request, scenario):
                name, stream, path = request
                replies.clear()
                replies.update({path: main, CHAT if path == RESPONSES else "-": twin})
                headers = {"X-Mockllama-Scenario": scenario} if scenario else {}
                try:
                    status, _, body = call(
                        mock.url, "POST", f"/{behaviour}{path}", request_bytes(name, stream, path), headers
                    )
                except (http.client.HTTPException, ConnectionError):
                    status, body = None, b""  # a stream the upstream broke off is broken off for the client too
                settle(mock)
                answered.append(status)
                assert b"mockllama: internal error" not in body, body[:300]
                loads(record_dir)  # raises CassetteError if anything unloadable was written

            exchange()
    assert {200, 502} <= set(answered)  # replies were recorded, and refused
    assert any(p.suffix == ".yaml" for p in record_dir.iterdir())
