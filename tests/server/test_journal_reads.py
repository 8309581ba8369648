"""Reading a large journal over HTTP: other clients are answered meanwhile, the read holds about
one slice of entries, and the reply is the document it always was, as the journal stood when the
read began."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
import tracemalloc
from urllib.parse import urlsplit

import pytest

from mockllama.app import ServeOptions, create_app
from mockllama.server import journal as journal_module
from mockllama.server.background import BackgroundServer
from mockllama.server.journal import (
    DEFAULT_BODY_CAP,
    JOURNAL,
    RENDER_SLICE_BYTES,
    RENDER_SLICE_ENTRIES,
    Entry,
    _slices,
)
from support.httpkit import call, post_json
from support.recordings import SCENARIOS

MIB = 1024 * 1024
JOURNAL_PATH = "/_mockllama/journal"
# The bodies that grow most when made into JSON: not JSON, so kept as text, and each control
# byte but five written \u00XX, six bytes for one. 32 MiB of them read as 180 MB of JSON.
NOT_JSON = bytes(range(1, 32)) * (DEFAULT_BODY_CAP // 31)
STORED = 32 * MIB
# Another client's longest wait while the journal is read: a read that makes the whole document
# at once holds every client up 1.4 s on the machine the review used and ours alike.
OTHERS_WAIT_AT_MOST = 0.4


def _post_not_json(url: str) -> None:
    status = call(url, "POST", "/v1/responses", NOT_JSON)[0]
    assert status == 400  # answered (not JSON), and journalled with its body


@pytest.fixture(scope="module")
def large():
    """A server whose journal holds 32 MiB of bodies (``--journal-bytes`` raised so all fit)."""
    server = BackgroundServer(create_app(SCENARIOS, ServeOptions(journal_bytes=40 * MIB))).start()
    try:
        for _ in range(STORED // len(NOT_JSON) + 1):
            _post_not_json(server.url)
        held = sum(len(entry.raw_body or b"") for entry in server.app[JOURNAL].entries())
        assert held >= STORED
        yield server
    finally:
        server.stop()


class Reader(threading.Thread):
    """GET the journal on a connection of its own, taking 64 KiB at a time with ``pause`` seconds
    between: a client that reads slower than the server can write."""

    def __init__(self, url: str, pause: float = 0.0):
        super().__init__()
        parts = urlsplit(url)
        self.address, self.pause, self.received = (parts.hostname, parts.port), pause, 0
        self.tail = b""

    def run(self) -> None:
        connection = http.client.HTTPConnection(*self.address, timeout=60)
        try:
            connection.request("GET", JOURNAL_PATH)
            reply = connection.getresponse()
            while piece := reply.read(65536):
                self.received += len(piece)
                self.tail = (self.tail + piece)[-64:]
                time.sleep(self.pause)
        finally:
            connection.close()


def test_other_clients_are_answered_while_a_slow_client_reads_a_large_journal(large):
    reader = Reader(large.url, pause=0.0005)
    reader.start()
    waits = []
    while reader.is_alive():
        started = time.monotonic()
        status, _, body = post_json(large.url, "/fixed/v1/responses", {"model": "text-cut-8", "input": "x"})
        waits.append(time.monotonic() - started)
        assert status == 200, body
        time.sleep(0.01)
    reader.join()
    assert reader.received > 5 * STORED and reader.tail.endswith(b"]}")  # all of it, ended
    assert len(waits) > 10 and max(waits) < OTHERS_WAIT_AT_MOST, sorted(waits)[-5:]


def test_a_read_holds_a_small_part_of_what_the_journal_holds(large):
    """Made whole, the document would be over five times the bodies (and the parsed bodies more)."""
    reader = Reader(large.url)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        reader.start()
        reader.join()
        grown = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert reader.received > 5 * STORED
    assert grown < STORED / 2, f"{grown / MIB:.1f} MiB held to read {STORED / MIB:.0f} MiB of bodies"


def test_a_small_journal_reads_as_the_document_it_always_was(start_server):
    """json.dumps of the whole document, byte for byte (what the route sent before it wrote slices),
    and JSON a strict parser takes: a body with NaN is no JSON, so it is shown as text."""
    server = start_server(journal_body_bytes=100_000, journal_bytes=1_000_000)
    post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": "é \u2028 😀"})
    call(server.url, "POST", "/v1/responses", b'{"model": "text-cut-8", "input": NaN}')
    call(server.url, "POST", "/v1/responses", b"\xff\xfe not UTF-8")
    call(server.url, "POST", "/v1/responses", b'{"input": "' + b"y" * 150_000 + b'"}')  # cut at the cap
    call(server.url, "GET", "/v1/models")  # no body
    for _ in range(4):  # more than one slice's worth of bodies
        post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": "z" * (RENDER_SLICE_BYTES // 3)})
    for index in range(RENDER_SLICE_ENTRIES + 20):  # more entries than one slice takes
        post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": index})
    status, headers, body = call(server.url, "GET", JOURNAL_PATH)
    entries, last_id = server.app[JOURNAL].snapshot()
    document = {"size": 1000, "last_id": last_id, "entries": [entry.to_dict() for entry in entries]}
    assert status == 200 and headers["Content-Type"] == "application/json; charset=utf-8"
    assert body == json.dumps(document).encode()
    assert json.loads(body, parse_constant=_no_constant) == document
    assert entries[1].to_dict()["body"] == '{"model": "text-cut-8", "input": NaN}'


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def test_a_read_is_the_journal_as_it_was_when_the_read_began(start_server):
    """Entries added, bodies let go and the journal cleared while a client is half-way through:
    none of it shows in what that client reads."""
    server = start_server(journal_bytes=4 * MIB)
    for _ in range(12):  # 3 MiB of bodies, 18 MB of JSON: far more than the sockets buffer
        _post_not_json(server.url)
    before = json.loads(call(server.url, "GET", JOURNAL_PATH)[2])
    parts = urlsplit(server.url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("GET", JOURNAL_PATH)
        reply = connection.getresponse()
        first = reply.read(65536)
        for _ in range(12):  # the old entries lose their bodies to the budget
            _post_not_json(server.url)
        assert call(server.url, "DELETE", JOURNAL_PATH)[0] == 200
        post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": "after"})
        read = json.loads(first + reply.read())
    finally:
        connection.close()
    assert read == before and read["last_id"] == 12 and [e["id"] for e in read["entries"]] == list(range(1, 13))
    assert not any(e["body_dropped"] for e in read["entries"])
    assert [e["id"] for e in json.loads(call(server.url, "GET", JOURNAL_PATH)[2])["entries"]] == [25]


def test_a_reader_that_leaves_half_way_costs_nothing_but_its_connection(start_server, caplog):
    server = start_server(journal_bytes=4 * MIB)
    for _ in range(12):
        _post_not_json(server.url)
    parts = urlsplit(server.url)
    with caplog.at_level(logging.DEBUG, logger="mockllama"):
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
            sock.sendall(f"GET {JOURNAL_PATH} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            sock.recv(65536)
        time.sleep(0.2)  # the server's next write finds the connection gone
        status, _, body = call(server.url, "GET", JOURNAL_PATH)
    assert status == 200 and len(json.loads(body)["entries"]) == 12
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


def test_a_slice_holds_at_most_its_bytes_of_bodies_or_one_larger_body():
    def entry(size: int) -> Entry:
        fields = dict.fromkeys(Entry.__dataclass_fields__)
        return Entry(**{**fields, "raw_body": b"x" * size, "body_truncated": False})

    sizes = [100_000, 100_000, 100_000, 300_000, 10, 262_144, 0, *[0] * 500]
    slices = list(_slices([entry(size) for size in sizes]))
    assert [stop for _, stop in slices][-1] == len(sizes) and [start for start, _ in slices][0] == 0
    assert all(stop == start_next for (_, stop), (start_next, _) in zip(slices, slices[1:]))
    for start, stop in slices:
        held = sum(sizes[start:stop])
        assert stop - start <= RENDER_SLICE_ENTRIES and (held <= RENDER_SLICE_BYTES or stop - start == 1)
    assert slices[:4] == [(0, 2), (2, 3), (3, 4), (4, 5)]


def test_a_read_that_fails_half_way_is_cut_short_not_followed_by_an_error_reply(start_server, monkeypatch, caplog):
    """Once the head is out, an error reply would be a second reply inside the first one's body."""
    server = start_server()
    for index in range(RENDER_SLICE_ENTRIES * 2):
        post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": index})
    made = []

    def failing(entries, start, stop):
        if made:
            raise RuntimeError("made to fail")
        made.append(start)
        return journal_module._rendered(entries, start, stop)

    monkeypatch.setattr(journal_module, "_rendered", failing)
    with pytest.raises(http.client.IncompleteRead):
        call(server.url, "GET", JOURNAL_PATH)
    monkeypatch.undo()
    assert [record.message for record in caplog.records if record.levelno >= logging.ERROR] == [
        "mockllama: could not write the journal; its reply is cut short"
    ]
    assert len(json.loads(call(server.url, "GET", JOURNAL_PATH)[2])["entries"]) == RENDER_SLICE_ENTRIES * 2
