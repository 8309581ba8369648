"""docs/security.md's two tables, held true row by row (issue 47, item 12): each row of "Bad
input" is a request sent here, whose reply must have the status, the error type and the empty
body the row names, and each row of the limits table is the value in the code and, where cheap,
a request just past it. The rows are read from the page, so a row added there needs a probe here
and a probe here a row there. (The page's list of what aiohttp's parser refuses is held by
tests/server/test_hardening_http.py the same way.)"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable

import pytest

from mockllama.app import ServeOptions, create_app
from mockllama.matching import bounded_cache
from mockllama.server import app as server_app
from mockllama.server import faults, journal, limits, stopping
from mockllama.server.background import BackgroundServer
from mockllama.server.steps import pacing
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.record_on_miss import RecordOnMiss
from mockllama.wire.nesting import MAX_JSON_DEPTH
from support import ROOT
from support.httpkit import call, request_bytes
from support.recordings import SCENARIOS

PAGE = ROOT / "docs" / "security.md"
TEXT_CUT_8 = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False)
OTHER = "http://elsewhere.test"
DEFAULTS = ServeOptions()  # serve's defaults, as declared once


def table(after: str) -> dict[str, str]:
    """The first Markdown table after the line ``after`` on the page: {first cell: the rest}."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(after))
    rows = {}
    for line in lines[start:]:
        if rows and not line.startswith("|"):
            break
        if line.startswith("|") and not line.startswith("| ---"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0]] = " | ".join(cells[1:])
    rows.pop(next(iter(rows)))  # the header
    return rows


def raw(port: int, data: bytes, timeout: float = 10) -> tuple[int, dict, bytes]:
    """Bytes sent as they are; the reply read until the server closes: (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        while piece := sock.recv(65536):
            received += piece
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
    return int(lines[0].split()[1]), headers, body


@pytest.fixture(scope="module")
def servers():
    """Servers made once per module and by the settings a row needs."""
    made: dict[str, BackgroundServer] = {}

    def get(name: str = "default", **settings) -> BackgroundServer:
        if name not in made:
            made[name] = BackgroundServer(create_app(SCENARIOS, ServeOptions(**settings))).start()
        return made[name]

    yield get
    for server in made.values():
        server.stop()


def _post(server, body: bytes, headers=None, path="/v1/responses"):
    return call(server.url, "POST", path, body, headers)


# --- "Bad input": one probe a row; each gives the replies the row describes ------------------------

Reply = tuple  # (status, headers, body)


def _recorded_error(servers) -> list[Reply]:
    recorded = next(i for i in SCENARIOS["errors"].interactions if i.status == 400)
    status, headers, body = call(servers().url, recorded.method, recorded.path, request_bytes(recorded))
    assert body == recorded.body  # exactly
    return [(status, headers, body)]


def _short_body(servers) -> list[Reply]:
    server = servers("short", body_timeout=0.5)
    head = b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head + b'{"input": ')
        received = b""
        while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
            received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    return [(int(head.split()[1]), {}, body)]


def _cross_site_miss(servers, tmp_path) -> list[Reply]:
    upstream = servers("upstream")
    recording = RecordOnMiss(parse_upstream(upstream.url, 30.0), tmp_path / "recorded")
    with BackgroundServer(create_app({}, record_on_miss=recording)) as mock:
        reply = call(mock.url, "GET", "/v1/models", headers={"Sec-Fetch-Site": "cross-site"})
    assert not (tmp_path / "recorded").exists()
    return [reply]


def _nested(depth: int) -> bytes:
    return b'{"model": "x", "input": ' + b"[" * depth + b"]" * depth + b"}"


BAD_INPUT: dict[str, Callable] = {
    "body that is not JSON, or not UTF-8 (UTF-16 or UTF-32, with or without a byte order mark)": lambda s, _: [
        _post(s(), b"{not json"),
        _post(s(), b"\xff\xfe" + json.dumps(TEXT_CUT_8.request_json).encode("utf-16-le")),
        _post(s(), json.dumps(TEXT_CUT_8.request_json).encode("utf-32-le")),
    ],
    "`NaN`, `Infinity`, `-Infinity`, or a number past a double (`1e999`) anywhere in a body": lambda s, _: [
        _post(s(), b'{"model": "text-cut-8", "input": "x", "temperature": ' + literal + b"}")
        for literal in (b"NaN", b"Infinity", b"-Infinity", b"1e999")
    ],
    'a request equal to a recorded error request (e.g. `{"input": 42}`)': lambda s, _: _recorded_error(s),
    "a field of the wrong type (`input`, `messages`, `stream`, `max_output_tokens`, `max_tokens`), or a body "
    "that is not an object": lambda s, _: [
        _post(s(), json.dumps({"model": "x", "input": "hi", "max_output_tokens": "8"}).encode()),
        _post(s(), json.dumps({"model": "x", "messages": "hi"}).encode(), path="/v1/chat/completions"),
        _post(s(), b"[1, 2]"),
    ],
    "no matching recording": lambda s, _: [_post(s(), json.dumps({"model": "x", "input": "never"}).encode())],
    "unknown route": lambda s, _: [call(s().url, "GET", "/no/such/path")],
    "wrong method": lambda s, _: [call(s().url, "GET", "/v1/responses")],
    "a method llama-server's HTTP library does not know (`CONNECT`, `TRACE`), whatever the target": lambda s, _: [
        raw(s().port, b"TRACE / HTTP/1.1\r\nHost: x\r\n\r\n"),
        raw(s().port, b"CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
    ],
    "a request line with `HTTP/2.0`, `HTTP/0.9` or no version": lambda s, _: [
        raw(s().port, b"GET /health" + version + b"\r\nHost: x\r\n\r\n")
        for version in (b" HTTP/2.0", b" HTTP/0.9", b"")
    ],
    "`OPTIONS *`": lambda s, _: [raw(s().port, b"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")],
    "`top_logprobs` without `logprobs: true`": lambda s, _: [
        _post(s(), json.dumps({**TEXT_CUT_8.request_json, "top_logprobs": 2}).encode())
    ],
    "a fault value that is not 0 to 999999999 in ASCII digits (`X-Mockllama-Fault: stall=...`)": lambda s, _: [
        _post(s(), request_bytes(TEXT_CUT_8), {"X-Mockllama-Fault": f"stall={value}"})
        for value in ("1000000000", "-1", "²", "x")
    ],
    "a body that stops short of its `Content-Length`": lambda s, _: _short_body(s),
    "JSON nested more than 128 levels deep": lambda s, _: [_post(s(), _nested(MAX_JSON_DEPTH))],
    'a lone UTF-16 surrogate such as `"\\ud800"`': lambda s, _: [
        _post(s(), b'{"model": "x", "input": "\\ud800"}'),
        _post(s(), b'{"model": "x", "input": 1, "x": "\\ud800"}'),
    ],
    "a `Host` not named by `--allowed-host` (when given)": lambda s, _: [
        call(s("hosts", allowed_hosts=("localhost",)).url, "GET", "/health", headers={"Host": "rebound.example"})
    ],
    "body over `--max-body-bytes` (default 1 MiB)": lambda s, _: [_post(s(), b"x" * (DEFAULTS.max_body_bytes + 1))],
    "any request from an origin `--cors-origin` leaves out": lambda s, _: [
        call(s("cors", cors_origins=("http://localhost:5173",)).url, "GET", "/health", headers={"Origin": OTHER})
    ],
    "a request to `/_mockllama/*` from a page on another origin, or marked `Sec-Fetch-Site: cross-site`, whose "
    "origin `--cors-origin` does not name": lambda s, _: [
        call(s().url, "GET", "/_mockllama/journal", headers={"Origin": OTHER}),
        call(s().url, "DELETE", "/_mockllama/journal", headers={"Sec-Fetch-Site": "cross-site"}),
    ],
    "under `--upstream`, a miss marked `Sec-Fetch-Site: cross-site` whose origin `--cors-origin` does not "
    "name": _cross_site_miss,
}


def test_every_row_of_bad_input_has_a_probe_and_every_probe_a_row():
    assert list(table("| request | reply |")) == list(BAD_INPUT)


@pytest.mark.parametrize("row", list(BAD_INPUT), ids=[row[:50] for row in BAD_INPUT])
def test_each_bad_input_is_answered_as_its_row_says(servers, tmp_path, row):
    said = table("| request | reply |")[row]
    statuses = {int(code) for code in re.findall(r"\b[1-5]\d\d\b", said)}
    types = set(re.findall(r"`(\w+_error)`", said))
    for status, headers, body in BAD_INPUT[row](servers, tmp_path):
        assert status in statuses or not statuses, (row, status, body[:200])
        if "empty body" in said:
            assert body == b"", (row, body[:200])
        if types and status >= 400:
            assert json.loads(body)["error"]["type"] in types, (row, body[:200])
        if "`Allow` header" in said:
            assert "OPTIONS" in headers["Allow"]


# --- The limits: the value the row gives is the code's, and where cheap a request past it ----------


def _body_limit(s):
    assert DEFAULTS.max_body_bytes == 1024 * 1024
    assert _post(s(), b"x" * (1024 * 1024))[0] == 400  # at the limit: read, and found not to be JSON
    assert _post(s(), b"x" * (1024 * 1024 + 1))[0] == 413


def _body_arrival(s):
    assert DEFAULTS.body_timeout == 60
    started = time.monotonic()
    assert _short_body(s)[0][0] == 408 and time.monotonic() - started < 5


def _nesting(s):
    assert MAX_JSON_DEPTH == 128
    assert _post(s(), _nested(127))[0] == 404  # 127 lists inside the body object: 128 levels
    assert _post(s(), _nested(128))[0] == 400


def _journal(s):
    assert DEFAULTS.journal_size == 1000 and DEFAULTS.journal_body_bytes == journal.DEFAULT_BODY_CAP == 256 * 1024
    assert DEFAULTS.journal_bytes == journal.DEFAULT_BODY_BUDGET == 32 * 1024 * 1024
    server = s("journal", journal_size=3, journal_body_bytes=16_000, journal_bytes=40_000)
    for n in range(4):
        _post(server, json.dumps({"model": "x", "input": str(n) * 20_000}).encode())
    entries = json.loads(call(server.url, "GET", "/_mockllama/journal")[2])["entries"]
    assert [e["id"] for e in entries] == [2, 3, 4] and all(e["body_truncated"] for e in entries)
    assert [e["body_dropped"] for e in entries] == [True, False, False]


def _journal_read(_s):
    """The slice; tests/server/test_journal_reads.py reads 32 MiB of bodies slowly, with other clients."""
    assert journal.RENDER_SLICE_BYTES == 256 * 1024


def _request_head(s):
    long_line = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 8200 + b"\r\n\r\n"
    many = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(130)) + b"\r\n"
    assert raw(s().port, long_line)[0] == raw(s().port, many)[0] == 400


def _fault_number(s):
    assert faults.MAX_VALUE == 999_999_999
    headers = {"X-Mockllama-Fault": "stall=999999999"}
    assert faults.FaultPlan.build(SCENARIOS, {}).choose(headers["X-Mockllama-Fault"], "text-cut-8") is not None
    assert _post(s(), request_bytes(TEXT_CUT_8), {"X-Mockllama-Fault": "stall=1000000000"})[0] == 400


def _stopping(_s):
    """The bound; tests/server/test_waits_end_at_shutdown.py and tests/plugin/test_plugin_stopping.py stop
    servers mid-wait."""
    assert stopping.HANDLERS_GRACE == 0.5
    server = BackgroundServer(create_app(SCENARIOS, ServeOptions(delay=600_000))).start()
    answers = []
    waiting = threading.Thread(target=lambda: answers.append(_post(server, request_bytes(TEXT_CUT_8))))
    waiting.start()
    time.sleep(0.5)  # until the request waits: the journal has no entry before it ends
    started = time.monotonic()
    server.stop()
    waiting.join(10)
    assert time.monotonic() - started < 3
    status, _, body = answers[0]
    assert status == 503 and json.loads(body)["error"]["type"] == "unavailable_error"


def _pace(_s):
    assert pacing.MIN_PACE == 0.001 and pacing.parse_pace("0.001") == 0.001
    for refused in ("0.0009", "1e-300", "inf"):
        with pytest.raises(ValueError):
            pacing.parse_pace(refused)


def _open_files(_s):
    before, after = limits.raise_open_file_limit()
    assert after >= before and limits.open_file_limit() == after


LIMITS: dict[str, tuple[tuple[str, ...], Callable]] = {
    # row -> (what its cells must say, the check)
    "request body": (("1 MiB", "--max-body-bytes", "413"), _body_limit),
    "request body arrival": (("60 s", "--body-timeout", "408"), _body_arrival),
    "JSON nesting in a request": (("128 levels", "400"), _nesting),
    "remembered selections": (
        (f"{bounded_cache.DEFAULT_MAX_BYTES // 2**20} MiB",),
        lambda _: bounded_cache.DEFAULT_MAX_BYTES == 16 * 2**20,
    ),
    "remembered answers": (
        (
            f"the {server_app.REMEMBERED_ANSWERS} most recently used",
            f"at most {server_app.ANSWERED_BODY_BYTES // 1024} KiB",
        ),
        lambda _: None,
    ),
    "journal": (("`--journal-size N`", "(1000;", "256 KiB", "`--journal-bytes` (32 MiB)"), _journal),
    "a journal read (`GET /_mockllama/journal`)": (
        ("256 KiB of their bodies", "off the event loop", "as they stood when the read began"),
        _journal_read,
    ),
    "request head": (("8190 bytes a line", "128 headers"), _request_head),
    "a fault's number (`stall=MS`, `disconnect=N`, ...)": (("0 to 999999999",), _fault_number),
    "waits of mockllama's own at shutdown (`stall=MS`, `stall-between=MS`, `--delay MS`, `--pace`)": (
        ("end at once on SIGTERM", "0.5 s", "503 `unavailable_error`"),
        _stopping,
    ),
    "`--pace FACTOR`": (("0.001 or more", "finite", "refused at start"), _pace),
    "open files": (("soft limit raised to the hard limit",), _open_files),
}


def test_every_row_of_the_limits_has_a_check_and_every_check_a_row():
    assert list(table("| what | limit | past it |")) == list(LIMITS)


@pytest.mark.parametrize("row", list(LIMITS))
def test_each_limit_is_the_codes_and_holds(servers, row):
    said = table("| what | limit | past it |")[row]
    words, check = LIMITS[row]
    for word in words:
        assert word in said, (row, word, said)
    assert check(servers) is not False
