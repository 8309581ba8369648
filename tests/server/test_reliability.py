"""Never the thing that breaks: load, disconnects, fuzzing, read-only cassettes, traversal.

Loopback only; every loop is bounded in count and time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllama.behaviours.replay import reply_for
from mockllama.recordings.cassettes import CassetteError, bundled_cassette_dir, load_scenarios
from support.httpkit import call, request_bytes
from support.recordings import SCENARIOS
from support.waiting import wait_for

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
POEM = SCENARIOS["poem-finishes"].find("POST", "/v1/responses", True)


def test_200_concurrent_streaming_clients_each_get_the_whole_stream(server):
    expected = {b: reply_for(b, POEM, SCENARIOS["poem-finishes"]).body for b in ("buggy", "fixed", "spec")}
    body = request_bytes(POEM)

    async def one(session, behaviour):
        async with session.post(f"{server.url}/{behaviour}/v1/responses", data=body) as response:
            return behaviour, response.status, await response.read()

    async def crowd():
        timeout = aiohttp.ClientTimeout(total=60)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=timeout) as session:
            return await asyncio.gather(*(one(session, ("buggy", "fixed", "spec")[n % 3]) for n in range(200)))

    results = asyncio.run(crowd())
    assert len(results) == 200
    for behaviour, status, received in results:
        assert status == 200
        assert received == expected[behaviour]


class _ErrorLog(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def _server_tasks(server) -> int:
    async def count():
        return len(asyncio.all_tasks())

    return asyncio.run_coroutine_threadsafe(count(), server._loop).result(timeout=10)


def _start_and_abandon_stream(url: str, body: bytes) -> bytes:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(
            f"POST /fixed/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        first = sock.recv(4096)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # send RST
    return first


def test_50_clients_that_vanish_mid_stream_leave_the_server_healthy(start_server):
    errors = _ErrorLog()
    logging.getLogger().addHandler(errors)
    try:
        server = start_server(pace=2.0)  # a paced stream is still running when its client goes
        call(server.url, "GET", "/health")
        baseline = _server_tasks(server)
        firsts = [_start_and_abandon_stream(server.url, request_bytes(POEM)) for _ in range(50)]
        assert all(first.startswith(b"HTTP/1.1 200") for first in firsts)
        status, _, body = call(server.url, "POST", "/buggy/v1/responses", request_bytes(POEM))
        assert status == 200 and body == POEM.body
        handlers_ended = wait_for(lambda: _server_tasks(server) <= baseline, 10, 0.1)
        assert handlers_ended, "handlers of vanished clients are still running"
    finally:
        logging.getLogger().removeHandler(errors)
    assert [r.getMessage() for r in errors.records] == []


RECORDED_500 = {i.body for s in SCENARIOS.values() for i in s.interactions if i.status >= 500}
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
FIELDS = [
    "model",
    "input",
    "messages",
    "stream",
    "max_output_tokens",
    "max_tokens",
    "tools",
    "tool_choice",
    "temperature",
    "metadata",
    "user",
    "stream_options",
]
REQUEST_LIKE = st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=6)
RECORDED_BODIES = [
    i.request_json for s in SCENARIOS.values() for i in s.interactions if isinstance(i.request_json, dict)
]
MUTATED = st.tuples(st.sampled_from(RECORDED_BODIES), st.sampled_from(FIELDS), JSON_VALUES).map(
    lambda t: {**t[0], t[1]: t[2]}
)
BODIES = st.one_of(
    REQUEST_LIKE.map(lambda b: json.dumps(b).encode()),
    MUTATED.map(lambda b: json.dumps(b).encode()),
    JSON_VALUES.map(lambda b: json.dumps(b).encode()),
    st.binary(max_size=300),  # includes invalid UTF-8 and broken JSON
    st.integers(10_000, 2_000_000).map(lambda n: json.dumps({"model": "x", "input": "x" * n}).encode()),
    st.sampled_from([i.request_raw for s in SCENARIOS.values() for i in s.interactions if i.request_raw]),
)
PATHS = st.sampled_from(
    [
        f"{prefix}{route}"
        for prefix in ("", "/buggy", "/fixed", "/spec")
        for route in ("/v1/responses", "/v1/chat/completions", "/v1/messages")
    ]
    + ["/v1/nope"]
)
HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "X-Mockllama-Scenario": st.sampled_from([*SCENARIOS, "nope", "../errors", ""]),
        "X-Mockllama-Behaviour": st.sampled_from(["buggy", "fixed", "spec", "BUGGY", "x"]),
    },
)


def test_fuzzed_requests_never_get_an_unrecorded_5xx_or_a_traceback(server):
    sent = []

    @settings(
        max_examples=2000,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )
    @given(path=PATHS, body=BODIES, headers=HEADERS)
    def probe(path, body, headers):
        status, response_headers, reply = call(server.url, "POST", path, body, headers)
        sent.append(status)
        assert b"Traceback" not in reply
        assert status < 500 or reply in RECORDED_500, (status, reply[:300])
        assert response_headers["X-Mockllama-Behaviour"] and response_headers["X-Mockllama-Scenario"]
        if status >= 400:
            error = json.loads(reply)["error"]
            assert error["code"] == status and error["message"]

    probe()
    assert len(sent) >= 2000
    assert {200, 400, 404, 413} <= set(sent)  # the fuzz reached every kind of answer


def _snapshot(directory: Path) -> dict:
    return {
        str(p.relative_to(directory)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_a_read_only_cassette_directory_works_and_is_never_written(tmp_path):
    source = tmp_path / "cassettes"
    shutil.copytree(bundled_cassette_dir(), source)
    mount = tmp_path / "read-only"
    mount.mkdir()
    before = _snapshot(source)
    port = 0
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # A private mount namespace: the read-only bind mount vanishes with the process.
    script = (
        f"mount --bind {source} {mount} && mount -o remount,bind,ro {mount} && "
        f"if touch {mount}/probe 2>/dev/null; then exit 99; fi && "
        f"exec {sys.executable} -m mockllama serve --cassettes {mount} --port {port}"
    )
    process = subprocess.Popen(["unshare", "-rm", "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            assert process.poll() is None, (process.returncode, process.stderr.read())
            try:
                status, _, _ = call(url, "GET", "/health")
                break
            except OSError:
                time.sleep(0.1)
        for scenario in ("text-cut-8", "tool-cut-20"):
            for stream in (False, True):
                interaction = SCENARIOS[scenario].find("POST", "/v1/responses", stream)
                status, _, body = call(url, "POST", "/fixed/v1/responses", request_bytes(interaction))
                assert status == 200 and b"incomplete" in body
        assert call(url, "GET", "/")[0] == 200
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
    assert b"Traceback" not in err
    assert _snapshot(source) == before


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "/etc/passwd", "text-cut-8/../errors", "..", "errors.yaml", "%2e%2e%2fetc%2fpasswd"]
)
def test_scenario_header_cannot_reach_files(server, name):
    status, _, body = call(server.url, "POST", "/v1/responses", b'{"input": "x"}', {"X-Mockllama-Scenario": name})
    assert status == 404
    assert b"root:" not in body and b"no scenario named" in body


def test_cassette_links_leading_outside_the_directory_are_refused(tmp_path):
    shutil.copy(next(bundled_cassette_dir().rglob("text-cut-8.yaml")), tmp_path / "text-cut-8.yaml")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.yaml"
    shutil.copy(next(bundled_cassette_dir().rglob("tool-cut-8.yaml")), outside)
    (tmp_path / "sneaky.yaml").symlink_to(outside)
    with pytest.raises(CassetteError, match="links outside the cassette directory"):
        load_scenarios([tmp_path])
    result = subprocess.run([*MOCKLLAMA, "serve", "--cassettes", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 2 and "links outside" in result.stderr


def test_cassettes_option_with_a_traversal_reads_only_that_directory(tmp_path):
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    shutil.copy(next(bundled_cassette_dir().rglob("text-cut-8.yaml")), tmp_path / "text-cut-8.yaml")
    traversal = inner / ".." / ".."  # names tmp_path: it is what the operator asked for, nothing more
    assert sorted(load_scenarios([traversal])) == ["text-cut-8"]


def test_remembered_selections_stay_small(scenarios):
    from mockllama.matching.matcher import REMEMBERED_BODY_BYTES, Matcher

    matcher = Matcher(scenarios)
    big = json.dumps({"model": "text-cut-8", "input": "x" * REMEMBERED_BODY_BYTES}).encode()
    for _ in range(3):
        assert matcher.select("POST", "/v1/responses", big).interaction.scenario == "text-cut-8"
    assert matcher._remembered.cache_info().currsize == 0
    small = json.dumps({"model": "text-cut-8", "input": "x"}).encode()
    matcher.select("POST", "/v1/responses", small)
    matcher.select("POST", "/v1/responses", small)
    assert matcher._remembered.cache_info().hits == 1
