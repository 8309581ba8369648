"""Bad input gets llama-server's error shape, a useful message, and the server keeps serving."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

from mockllama.recordings.cassettes import CassetteError, load_scenarios
from support.httpkit import call, post_json

SEED = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0}


def _error(body: bytes) -> dict:
    payload = json.loads(body)
    assert set(payload) == {"error"}
    assert set(payload["error"]) == {"code", "message", "type"}
    return payload["error"]


def _still_serving(url):
    status, _, body = post_json(url, "/buggy/v1/responses", SEED)
    assert status == 200 and json.loads(body)["status"] == "completed"


def test_no_match_names_the_nearest_scenario_and_the_fields_that_differ(server):
    status, headers, body = post_json(server.url, "/v1/responses", {**SEED, "max_output_tokens": 9})
    assert status == 404
    error = _error(body)
    assert error == {"code": 404, "type": "not_found_error", "message": error["message"]}
    # text-cut-8, text-cut-16 and text-cut-64 differ from it in the limit alone: all are named.
    # thinking-finishes (the count prompt at 400) is of another server set-up: never a nearest one
    assert "Nearest scenarios (3, equally near, 1 difference each): " in error["message"]
    assert "thinking-finishes" not in error["message"]
    assert "'text-cut-8': max_output_tokens: sent 9, recorded 8" in error["message"]
    assert "'text-cut-64': max_output_tokens: sent 9, recorded 64" in error["message"]
    assert "X-Mockllama-Scenario" in error["message"] and "--fallback" in error["message"]
    assert "Traceback" not in error["message"]
    _still_serving(server.url)


def test_no_match_nearest_is_the_closest_prompt(server):
    status, _, body = post_json(server.url, "/v1/responses", {**SEED, "input": "Count from 1 to 100."})
    assert status == 404
    message = _error(body)["message"]
    # text-exact-limit and ladder-cut-8 have the same limit and another prompt too: just as near, so listed
    assert "Nearest scenarios (3, equally near, 1 difference each): " in message
    assert "'ladder-cut-8': input: sent \"Count from 1 to 100.\", " in message  # in the client's words
    assert (
        '\'text-cut-8\': input: sent "Count from 1 to 100.", recorded "Count from 1 to 200, separated by spaces."'
    ) in message
    assert "'text-exact-limit': input: " in message


def test_malformed_json_is_a_400(server):
    status, headers, body = call(server.url, "POST", "/v1/responses", b'{"model": "x", "input": ')
    assert status == 400
    error = _error(body)
    assert error["type"] == "invalid_request_error" and "not valid JSON" in error["message"]
    assert headers["X-Mockllama-Behaviour"] == "buggy" and headers["X-Mockllama-Scenario"] == "none"
    _still_serving(server.url)


def test_invalid_utf8_is_a_400(server):
    status, _, body = call(server.url, "POST", "/v1/responses", b'{"input": "\xff\xfe"}')
    assert status == 400
    assert _error(body)["code"] == 400


def test_recorded_malformed_request_replays_the_recorded_error(server, scenarios):
    recorded = scenarios["errors"].interactions[0]
    status, _, body = call(server.url, "POST", "/v1/responses", recorded.request_raw)
    assert (status, body) == (400, recorded.body)
    assert "json.exception.parse_error" in _error(body)["message"]


def test_recorded_wrong_type_replays_the_recorded_error_whatever_the_model(server, scenarios):
    recorded = next(i for i in scenarios["errors"].interactions if i.request_json == {"model": "x", "input": 42})
    status, headers, body = post_json(server.url, "/v1/responses", {"input": 42, "model": "other"})
    assert (status, body) == (400, recorded.body)
    assert headers["X-Mockllama-Scenario"] == "errors"


@pytest.mark.parametrize(
    ("path", "payload", "words"),
    [
        ("/v1/responses", {"input": {"role": "user"}}, "'input' must be a string or array"),
        ("/v1/responses", {"input": "hi", "stream": "yes"}, "type must be boolean, but is string"),
        ("/v1/responses", {"input": "hi", "max_output_tokens": "8"}, "'max_output_tokens' must be an integer"),
        ("/v1/chat/completions", {"messages": {"role": "user"}}, "Expected 'messages' to be an array"),
        ("/v1/responses", [1, 2], "must be a JSON object"),
        ("/v1/responses", "hello", "must be a JSON object"),
    ],
)
def test_wrong_types_are_a_400(server, path, payload, words):
    status, _, body = post_json(server.url, path, payload)
    assert status == 400
    assert words in _error(body)["message"]
    _still_serving(server.url)


def test_unknown_route_is_a_404_that_lists_the_routes(server):
    status, _, body = call(server.url, "GET", "/v2/responses")
    assert status == 404
    error = _error(body)
    assert error["type"] == "not_found_error" and "/v1/responses" in error["message"]
    _still_serving(server.url)


def test_wrong_method_is_a_405(server):
    status, _, body = call(server.url, "GET", "/fixed/v1/responses")
    assert status == 405
    assert "use POST" in _error(body)["message"]
    _still_serving(server.url)


def test_oversized_body_is_a_413(start_server):
    small = start_server(max_body_bytes=1000)
    status, _, body = post_json(small.url, "/v1/responses", {**SEED, "input": "x" * 2000})
    assert status == 413
    assert "1000 bytes" in _error(body)["message"]
    _still_serving(small.url)


def test_oversized_chunked_body_without_length_is_a_413(start_server):
    small = start_server(max_body_bytes=1000)
    parts = urlsplit(small.url)
    payload = json.dumps({**SEED, "input": "x" * 5000}).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + f"{len(payload):x}\r\n".encode()
            + payload
            + b"\r\n0\r\n\r\n"
        )
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 413")
    assert b'"type":"invalid_request_error"' in reply
    _still_serving(small.url)


def test_default_body_limit_is_one_mebibyte(server):
    status, _, _ = post_json(server.url, "/v1/responses", {**SEED, "input": "x" * (1024 * 1024)})
    assert status == 413
    status, _, _ = post_json(server.url, "/v1/responses", {**SEED, "input": "x" * (1024 * 1000)})
    assert status == 404  # under the limit: read, then matched against the recordings


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "the file is empty"),
        (b"interactions: [\n  - {request: ", "not valid YAML"),
        (b"just: a mapping\n", "not a vcrpy cassette"),
        (b"interactions: []\nversion: 1\n", "holds no interactions"),
        (b"interactions:\n- request: {}\n  response: {}\nversion: 1\n", "not a vcrpy cassette"),
        (b"\xff\xfe\x00bad", "not UTF-8"),
    ],
)
def test_corrupt_cassette_stops_loading_with_the_file_and_reason(tmp_path, content, reason):
    broken = tmp_path / "broken.yaml"
    broken.write_bytes(content)
    with pytest.raises(CassetteError) as caught:
        load_scenarios([tmp_path])
    assert str(broken) in str(caught.value)
    assert reason in str(caught.value)


def test_cassette_directory_without_cassettes_is_an_error(tmp_path):
    with pytest.raises(CassetteError, match="holds no cassettes"):
        load_scenarios([tmp_path])
    with pytest.raises(CassetteError, match="no such directory"):
        load_scenarios([tmp_path / "missing"])


def test_error_replies_name_the_behaviour_that_was_asked_for(server):
    _, headers, _ = post_json(server.url, "/fixed/v1/responses", {**SEED, "max_output_tokens": 9})
    assert headers["X-Mockllama-Behaviour"] == "fixed"
    _, headers, _ = post_json(
        server.url, "/v1/responses", {**SEED, "max_output_tokens": 9}, {"X-Mockllama-Behaviour": "spec"}
    )
    assert headers["X-Mockllama-Behaviour"] == "spec"
    _, headers, _ = post_json(server.url, "/v1/responses", SEED, {"X-Mockllama-Behaviour": "nonsense"})
    assert headers["X-Mockllama-Behaviour"] == "buggy"  # the server default; the error names the bad header


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])
@pytest.mark.parametrize("behaviour", ["buggy", "spec"])
def test_nan_infinity_and_overflowing_numbers_are_not_json_and_get_a_400(server, literal, behaviour):
    """llama-server's parser refuses each (tests/live/test_live_hardening.py); spec never echoes one."""
    body = f'{{"model": "text-cut-8", "input": "x", "temperature": {literal}}}'.encode()
    status, _, reply = call(server.url, "POST", f"/{behaviour}/v1/responses", body)
    assert status == 400
    error = json.loads(reply)["error"]
    assert error["type"] == "invalid_request_error" and "not valid JSON" in error["message"]
