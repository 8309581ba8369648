"""Faults on the wire: what each one sends, byte for byte, chosen per request or per scenario."""

from __future__ import annotations

import json
import re
import socket
import time
from urllib.parse import urlsplit

import pytest

from mockllama.behaviours.replay import reply_for
from mockllama.server.faults import KINDS, FaultPlan, parse_fault, recorded_errors, usage
from mockllama.teaching.fault_matrix import faults_measured
from support.httpkit import call, post_json, sse_pairs
from support.recordings import SCENARIOS

PLAIN = {"model": "text-finishes", "input": "anything"}
STREAM = {**PLAIN, "stream": True}


def recorded(stream: bool, behaviour: str = "buggy"):
    interaction = SCENARIOS["text-finishes"].find("POST", "/v1/responses", stream)
    return reply_for(behaviour, interaction, SCENARIOS["text-finishes"])


def raw_exchange(url: str, payload: dict, fault: str) -> tuple[bytes, bytes]:
    """(head, rest) of the reply exactly as it came off the socket, until the server closed it."""
    parts = urlsplit(url)
    body = json.dumps(payload).encode()
    head = (
        f"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
        f"{len(body)}\r\nConnection: close\r\nX-Mockllama-Fault: {fault}\r\n\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(head + body)
        data = b""
        while piece := sock.recv(65536):
            data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def dechunk(rest: bytes) -> tuple[bytes, bool]:
    """The body of a chunked reply, and whether it ended with the terminating zero-size chunk."""
    body = b""
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return body, True
        body += rest[:size]
        rest = rest[size + 2 :]
    return body, False


# Every registered fault, with each value it is measured with: what "every fault" means below.
EVERY_FAULT = faults_measured(SCENARIOS)


@pytest.mark.parametrize("text", [*EVERY_FAULT, " Disconnect = 3 "])
def test_faults_parse(text):
    fault = parse_fault(text)
    assert str(fault) == text.strip().lower().replace(" ", "")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("explode", re.escape(f"unknown fault 'explode'; use one of: {usage()}")),
        ("disconnect", "disconnect needs a whole number: disconnect=N"),
        ("stall=-5", "stall needs a whole number"),
        ("truncate-json=3", "takes no value"),
    ],
)
def test_bad_faults_say_what_to_write(text, says):
    with pytest.raises(ValueError, match=says):
        parse_fault(text)


def test_disconnect_drops_the_stream_after_n_events_without_the_terminal_chunk(server):
    head, rest = raw_exchange(server.url, STREAM, "disconnect=3")
    assert b"Transfer-Encoding: chunked" in head and b"X-Mockllama-Fault: disconnect=3" in head
    body, terminated = dechunk(rest)
    assert not terminated
    assert body == b"".join(event.raw for event in recorded(True).events[:3])
    assert [name for name, _ in sse_pairs(body)] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
    ]


def test_disconnect_bytes_cuts_a_plain_body_short_of_its_content_length(server):
    head, rest = raw_exchange(server.url, PLAIN, "disconnect-bytes=100")
    whole = recorded(False).body
    assert f"Content-Length: {len(whole)}".encode() in head
    assert rest == whole[:100]


def test_disconnect_zero_sends_headers_only(server):
    head, rest = raw_exchange(server.url, PLAIN, "disconnect=0")
    assert head.startswith(b"HTTP/1.1 200") and rest == b""


def test_truncate_stream_ends_cleanly_without_a_terminal_event(server):
    head, rest = raw_exchange(server.url, STREAM, "truncate-stream=4")
    body, terminated = dechunk(rest)
    assert terminated  # a complete HTTP reply ...
    names = [name for name, _ in sse_pairs(body)]
    assert len(names) == 4 and "response.completed" not in names  # ... with no terminal event


def test_truncate_json_is_a_complete_reply_with_half_the_body(server):
    head, rest = raw_exchange(server.url, PLAIN, "truncate-json")
    whole = recorded(False).body
    assert rest == whole[: len(whole) // 2] and f"Content-Length: {len(rest)}".encode() in head
    with pytest.raises(ValueError):
        json.loads(rest)


def test_truncate_json_on_a_stream_cuts_the_last_events_data(server):
    _, rest = raw_exchange(server.url, STREAM, "truncate-json")
    body, terminated = dechunk(rest)
    events = recorded(True).events
    assert terminated and body.startswith(b"".join(event.raw for event in events[:-1]))
    last_name, last_data = sse_pairs(body)[-1]
    assert last_name == "response.completed" and isinstance(last_data, str)  # not parseable JSON


def test_stall_delays_the_first_byte(server):
    started = time.monotonic()
    status, headers, body = post_json(server.url, "/v1/responses", PLAIN, {"X-Mockllama-Fault": "stall=300"})
    assert time.monotonic() - started >= 0.3
    assert status == 200 and body == recorded(False).body and headers["X-Mockllama-Fault"] == "stall=300"


def test_stall_between_paces_every_later_event(server):
    events = recorded(True).events
    started = time.monotonic()
    status, _, body = post_json(server.url, "/v1/responses", STREAM, {"X-Mockllama-Fault": "stall-between=20"})
    assert time.monotonic() - started >= 0.02 * (len(events) - 1)
    assert status == 200 and body == b"".join(event.raw for event in events)


def test_status_sends_llama_servers_own_recorded_error(server):
    errors = recorded_errors(SCENARIOS)
    for code, interaction in errors.items():
        status, headers, body = post_json(server.url, "/v1/responses", STREAM, {"X-Mockllama-Fault": f"status={code}"})
        assert (status, body) == (code, interaction.body)
        assert headers["Content-Type"].startswith("application/json")
        assert headers["X-Mockllama-Fault"] == f"status={code}" and headers["X-Mockllama-Scenario"] == "text-finishes"


def test_a_status_nobody_recorded_is_refused_not_invented(server):
    status, _, body = post_json(server.url, "/v1/responses", PLAIN, {"X-Mockllama-Fault": "status=418"})
    error = json.loads(body)["error"]
    assert status == 400 and error["type"] == "invalid_request_error"
    assert "no recording of llama-server answering HTTP 418" in error["message"]
    assert ", ".join(str(code) for code in sorted(recorded_errors(SCENARIOS))) in error["message"]


def test_a_bad_fault_header_is_a_400(server):
    status, _, body = post_json(server.url, "/v1/responses", PLAIN, {"X-Mockllama-Fault": "explode"})
    assert status == 400 and "bad X-Mockllama-Fault: unknown fault 'explode'" in json.loads(body)["error"]["message"]


def test_a_fault_never_changes_the_cached_reply(server):
    raw_exchange(server.url, PLAIN, "truncate-json")
    status, headers, body = post_json(server.url, "/v1/responses", PLAIN)
    assert status == 200 and body == recorded(False).body and "X-Mockllama-Fault" not in headers


def test_per_scenario_faults_apply_only_there_and_the_header_overrides(start_server):
    server = start_server(faults={"text-finishes": "truncate-json"})
    _, headers, faulted = post_json(server.url, "/v1/responses", PLAIN)
    assert headers["X-Mockllama-Fault"] == "truncate-json" and faulted == recorded(False).body[: len(faulted)]
    assert len(faulted) == len(recorded(False).body) // 2
    _, headers, other = post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": "x"})
    assert "X-Mockllama-Fault" not in headers and json.loads(other)["status"] == "completed"
    _, headers, overridden = post_json(server.url, "/v1/responses", PLAIN, {"X-Mockllama-Fault": "stall=0"})
    assert headers["X-Mockllama-Fault"] == "stall=0" and overridden == recorded(False).body


def test_every_scenario_fault(start_server):
    server = start_server(faults={"*": "status=500"})
    status, _, _ = post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": "x"})
    assert status == 500


@pytest.mark.parametrize(
    ("faults", "says"),
    [
        ({"nope": "stall=1"}, "no loaded scenario is named 'nope'"),
        ({"*": "status=418"}, "no recording of llama-server answering HTTP 418"),
        ({"*": "wobble"}, "unknown fault 'wobble'"),
    ],
)
def test_bad_scenario_faults_stop_start_up(faults, says):
    with pytest.raises(ValueError, match=says):
        FaultPlan.build(SCENARIOS, faults)


def test_the_journal_records_each_fault_and_what_went_out(start_server):
    server = start_server()
    for fault in ("disconnect=3", "truncate-stream=3", "status=500", "stall=0"):
        try:
            raw_exchange(server.url, STREAM, fault)
        except OSError:
            pass
    entries = json.loads(call(server.url, "GET", "/_mockllama/journal")[2])["entries"]
    three = len(b"".join(event.raw for event in recorded(True).events[:3]))
    assert [(e["fault"], e["status"], e["stream"], e["finished"], e["bytes_sent"]) for e in entries] == [
        ("disconnect=3", 200, True, False, three),
        ("truncate-stream=3", 200, True, False, three),
        ("status=500", 500, False, True, len(recorded_errors(SCENARIOS)[500].body)),
        ("stall=0", 200, True, True, len(recorded(True).body)),
    ]


# A number too large to wait for (asyncio.sleep raises OverflowError), or not written in ASCII digits,
# is a bad fault like any other: a 400 in llama-server's shape, and a refused start for --fault.
HUGE = "9" * 400


@pytest.mark.parametrize(
    "fault", [f"{kind.name}={HUGE}" for kind in KINDS.values() if kind.value is not None] + ["stall=1" + "0" * 9]
)
def test_a_fault_value_out_of_range_is_a_400(server, fault):
    for stream in (False, True):
        status, _, body = post_json(
            server.url, "/v1/responses", {**PLAIN, "stream": stream}, {"X-Mockllama-Fault": fault}
        )
        error = json.loads(body)["error"]
        assert (status, error["type"]) == (400, "invalid_request_error"), body
        assert "bad X-Mockllama-Fault" in error["message"] and "0 to 999999999" in error["message"]


@pytest.mark.parametrize("value", ["\u0663", "\u00b2", "0x10", "1e3", "+5", "1_000"])
def test_a_fault_value_must_be_ascii_digits(value):
    with pytest.raises(ValueError, match="0 to 999999999"):
        parse_fault(f"disconnect={value}")


def test_a_fault_value_out_of_range_stops_start_up():
    with pytest.raises(ValueError, match="0 to 999999999"):
        FaultPlan.build(SCENARIOS, {"*": f"stall={HUGE}"})


def test_the_largest_fault_value_is_accepted():
    assert parse_fault("stall=999999999").value == 999_999_999


# --- unavailable=SECONDS: llama-server's own 503, with the Retry-After it does not send itself -----


@pytest.mark.parametrize("payload", [PLAIN, STREAM], ids=["plain", "stream"])
def test_unavailable_sends_llama_servers_recorded_503_with_retry_after(server, payload):
    status, headers, body = post_json(server.url, "/v1/responses", payload, {"X-Mockllama-Fault": "unavailable=7"})
    assert (status, body) == (503, recorded_errors(SCENARIOS)[503].body)
    assert json.loads(body)["error"]["type"] == "unavailable_error"
    assert headers["Retry-After"] == "7" and headers["X-Mockllama-Fault"] == "unavailable=7"
    assert headers["X-Mockllama-Scenario"] == "text-finishes"


def test_unavailable_needs_a_recorded_503():
    without = {
        name: scenario for name, scenario in SCENARIOS.items() if 503 not in {i.status for i in scenario.interactions}
    }
    with pytest.raises(
        ValueError, match="no recording of llama-server answering HTTP 503, so unavailable=5 has no body"
    ):
        FaultPlan.build(without, {"*": "unavailable=5"})
