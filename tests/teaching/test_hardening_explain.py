"""`mockllama explain --journal URL` against hostile input (issue 27 item 4).

Everything in a journal came from a client, and any web page can be one: what is printed must
carry no terminal escape sequence. And the URL may name a server that is no journal at all: it
gets one line and exit 2, within a deadline and a size cap (the ones `check` uses), never a
traceback or a hang.

The hostile servers are test doubles: small socket servers that answer every request with the
bytes a broken, wrong or malicious HTTP server sends instead of mockllama's journal
(``GET /_mockllama/journal``, see mockllama/journal.py).
"""

from __future__ import annotations

import json
import re
import socketserver
import subprocess
import sys
import threading
import time

import pytest

from mockllama.app import create_app
from mockllama.server.background import BackgroundServer
from mockllama.wire.untrusted_http import MAX_REPLY_BYTES
from support.httpkit import call
from support.recordings import SCENARIOS

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
# C0 controls but the line break, DEL, C1 controls: what a terminal acts on.
TERMINAL_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def explain_journal(url: str, *args: str, timeout: float = 60):
    return subprocess.run(
        [*MOCKLLAMA, "explain", "--journal", url, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        errors="surrogateescape",
    )


# --- what a web page can plant reaches the terminal escaped --------------------------------------


PLANTED = "\x1b]0;pwned\x07 \x1b[2J \x9b31m \u202eevil"


def test_escape_sequences_from_clients_are_shown_escaped(start_server):
    server = start_server()
    # What a page can send with fetch(): a text/plain body, and a path of its choosing.
    call(server.url, "POST", "/v1/responses", PLANTED.encode(), {"Content-Type": "text/plain"})
    call(server.url, "POST", "/v1/responses", json.dumps({"input": PLANTED}).encode())
    call(server.url, "POST", "/v1/%1B%5D0%3Bpwned%07%1B%5B2J%C2%9B", b"{}")
    result = explain_journal(server.url)
    assert result.returncode == 0, result.stderr
    assert not TERMINAL_CONTROLS.search(result.stdout), result.stdout
    assert "\u202e" not in result.stdout
    assert r"\x1b]0;pwned\x07" in result.stdout and r"\x9b31m" in result.stdout and r"\u202e" in result.stdout
    assert all(len(line) <= 80 for line in result.stdout.splitlines())


def test_a_body_nested_too_deep_to_parse_does_not_break_the_journal(start_server):
    server = start_server()
    status, _, _ = call(server.url, "POST", "/v1/responses", b"[" * 5000)
    assert status == 400
    status, _, body = call(server.url, "GET", "/_mockllama/journal")
    assert status == 200
    (entry,) = json.loads(body)["entries"]
    assert entry["body"] == "[" * 5000  # kept as text, as any body that does not parse
    result = explain_journal(server.url)
    assert result.returncode == 0 and "sent: [[[[" in result.stdout


def test_only_the_last_entries_are_fetched_however_large_the_journal(start_server):
    server = start_server()
    big = json.dumps({"input": "x" * 15_000}).encode()
    for _ in range(600):  # ~9 MiB of journal, over check's 8 MiB cap
        call(server.url, "POST", "/v1/responses", big)
    call(server.url, "POST", "/v1/responses", b'{"input": "the last one"}')
    _, _, whole = call(server.url, "GET", "/_mockllama/journal")
    assert len(whole) > MAX_REPLY_BYTES
    result = explain_journal(server.url, "--last", "2")
    assert result.returncode == 0, result.stderr
    assert [line.split()[0] for line in result.stdout.splitlines() if line.startswith("#")] == ["#600", "#601"]
    assert "the last one" in result.stdout


# --- a server that is not a journal: one line, exit 2 --------------------------------------------


class RawServer:
    """A test double of a broken HTTP server: every connection gets ``answer(sock)``, which writes
    whatever it likes. ``sent`` counts the bytes written, ``gone`` notes that the client hung up."""

    def __init__(self, answer):
        self.sent, self.gone = 0, False
        double = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                self.request.settimeout(5)
                try:
                    self.request.recv(65536)  # the request; its content does not matter here
                    answer(self.request, double)
                except OSError:
                    double.gone = True

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def send(self, sock, data: bytes) -> None:
        sock.sendall(data)
        self.sent += len(data)

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def reply_with(body: bytes, head: bytes | None = None):
    def answer(sock, double):
        double.send(
            sock,
            head
            if head is not None
            else b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body),
        )
        double.send(sock, body)

    return answer


def _entry(**changes) -> dict:
    entry = {
        "id": 1,
        "time": 1796045796.6,
        "method": "POST",
        "path": "/v1/responses",
        "behaviour": "buggy",
        "scenario": None,
        "selected_by": None,
        "fault": None,
        "status": 404,
        "stream": False,
        "finished": True,
        "bytes_sent": 10,
        "error": "mockllama: no",
        "body": {"input": "x"},
    }
    return {**entry, **changes}


def _journal(*entries, last_id=1) -> bytes:
    return json.dumps({"size": 1000, "last_id": last_id, "entries": list(entries)}).encode()


NOT_A_JOURNAL = {
    "bad-status-line": reply_with(b"", head=b"HELLO THERE\r\n\r\n"),
    "too-many-headers": reply_with(
        b"{}", head=b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 500 + b"Content-Length: 2\r\n\r\n"
    ),
    "http-error": reply_with(b"<html>nope</html>", head=b"HTTP/1.1 500 Oops\r\nContent-Length: 17\r\n\r\n"),
    "html": reply_with(b"<html><body>a page</body></html>"),
    "deep-json": reply_with(b"[" * 100_000 + b"]" * 100_000),
    "a-list": reply_with(b"[1, 2, 3]"),
    "entries-not-a-list": reply_with(json.dumps({"last_id": 1, "entries": 5}).encode()),
    "entry-not-an-object": reply_with(_journal(1)),
    "entry-missing-fields": reply_with(_journal({})),
    "id-a-string": reply_with(_journal(_entry(id="1"))),
    "time-infinite": reply_with(_journal(_entry()).replace(b"1796045796.6", b"1e999")),
    "time-huge": reply_with(_journal(_entry(time=10**300))),
    "time-nan": reply_with(_journal(_entry()).replace(b"1796045796.6", b"NaN")),
    "status-a-list": reply_with(_journal(_entry(status=[404]))),
    "scenario-an-object": reply_with(_journal(_entry(scenario={"a": 1}))),
    "last-id-missing": reply_with(json.dumps({"entries": []}).encode()),
}


def _refused(result) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mockllama explain: cannot read the journal of "), result.stderr
    assert not TERMINAL_CONTROLS.search(result.stderr)


@pytest.mark.parametrize("kind", list(NOT_A_JOURNAL))
def test_a_server_that_is_not_a_journal_gets_one_line_and_exit_2(kind):
    with RawServer(NOT_A_JOURNAL[kind]) as double:
        _refused(explain_journal(double.url, "--timeout", "5"))


def drip(sock, double):
    """Promises 1,000 bytes, then sends one every 0.2 s."""
    double.send(sock, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    for _ in range(1000):
        double.send(sock, b" ")
        time.sleep(0.2)


def test_a_server_that_drips_is_cut_off_at_the_deadline():
    with RawServer(drip) as double:
        started = time.monotonic()
        result = explain_journal(double.url, "--timeout", "2")
        took = time.monotonic() - started
    _refused(result)
    assert "no complete answer from GET /_mockllama/journal" in result.stderr and "within 2 s" in result.stderr
    assert took < 10, took


def test_the_deadline_covers_both_requests_and_the_message_names_the_whole_budget():
    # explain asks twice (the last id, then the entries) under one --timeout. The first answer is
    # slow but whole, the second drips: the cut comes at the one deadline, and the message names
    # the budget the user gave, not what was left of it for the second request.
    def slow_then_drip(sock, double):
        double.answered += 1
        if double.answered == 1:
            time.sleep(1)
            reply_with(json.dumps({"last_id": 5, "entries": []}).encode())(sock, double)
        else:
            drip(sock, double)

    with RawServer(slow_then_drip) as double:
        double.answered = 0
        started = time.monotonic()
        result = explain_journal(double.url, "--timeout", "3")
        took = time.monotonic() - started
    _refused(result)
    assert double.answered == 2
    assert "no complete answer from GET /_mockllama/journal?since=" in result.stderr
    assert "within 3 s" in result.stderr, result.stderr
    assert took < 10, took


def test_a_server_that_never_stops_is_cut_off_at_checks_cap():
    limit = 4 * MAX_REPLY_BYTES  # the double's own bound, far past the cap

    def endless(sock, double):
        double.send(sock, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
        chunk = b"[" + b"0," * 32768
        while double.sent < limit:
            double.send(sock, chunk)

    with RawServer(endless) as double:
        result = explain_journal(double.url, "--timeout", "30")
        sent = double.sent
    _refused(result)
    assert f"more than {MAX_REPLY_BYTES} bytes" in result.stderr
    assert sent < limit


def test_a_url_with_a_password_is_not_repeated(start_server):
    result = explain_journal("http://user:hunter2-planted@127.0.0.1:9", "--timeout", "2")
    _refused(result)
    assert "hunter2-planted" not in result.stderr


def test_a_url_that_is_not_http_is_refused():
    _refused(explain_journal("file:///etc/passwd", "--timeout", "2"))


def test_the_journal_of_a_real_server_still_reads(start_server):
    server = start_server()
    call(
        server.url,
        "POST",
        "/fixed/v1/responses",
        json.dumps(SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False).request_json).encode(),
    )
    result = explain_journal(server.url)
    assert result.returncode == 0, result.stderr
    assert re.match(
        r"#1 +\d\d:\d\d:\d\d  POST /fixed/v1/responses -> 200  fixed  text-cut-8 \(match\)",
        result.stdout.splitlines()[0],
    )


def test_last_0_asks_nothing():
    with BackgroundServer(create_app(SCENARIOS)) as server:
        result = explain_journal(server.url, "--last", "0")
    assert result.returncode == 0 and "The journal is empty" in result.stdout
