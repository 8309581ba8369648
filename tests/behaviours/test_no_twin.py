"""fixed without a chat twin: usage at the limit decides, and X-Mockllama-Decided-By says so.

Every bundled Responses scenario has its twin, so these cassettes are the real recordings with
their chat interactions left out (nothing added or changed): what a user's own recording of
``/v1/responses`` alone looks like.
"""

from __future__ import annotations

import json

import pytest
import yaml

from mockllama.app import create_app
from mockllama.recordings.cassettes import load_scenarios
from mockllama.server.background import BackgroundServer
from support import yamlkit
from support.httpkit import call, request_bytes, sse_pairs

NAMES = ["text-cut-8", "text-finishes", "text-exact-limit", "tool-cut-20"]


@pytest.fixture(scope="module")
def no_twin_server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("no-twin")
    for name in NAMES:
        data = yaml.safe_load(yamlkit.cassette_path(name).read_text(encoding="utf-8"))
        data["interactions"] = [i for i in data["interactions"] if "/v1/chat/completions" not in i["request"]["uri"]]
        assert len(data["interactions"]) == 2
        (directory / f"{name}-no-twin.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    scenarios = load_scenarios([directory])
    with BackgroundServer(create_app(scenarios)) as running:
        yield running, scenarios


def _usage(name: str, stream: bool) -> tuple[int, int]:
    """(output_tokens, max_output_tokens), read straight from the recording."""
    recorded = yamlkit.find(name, "/v1/responses", stream)
    response = recorded.events()[-1]["response"] if stream else recorded.json()
    return response["usage"]["output_tokens"], recorded.request["max_output_tokens"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("stream", [False, True])
def test_usage_at_the_limit_decides_and_the_header_says_so(no_twin_server, name, stream):
    server, scenarios = no_twin_server
    tokens, limit = _usage(name, stream)
    cut = tokens >= limit
    interaction = scenarios[f"{name}-no-twin"].find("POST", "/v1/responses", stream)
    status, headers, body = call(
        server.url,
        "POST",
        "/fixed/v1/responses",
        request_bytes(interaction),
        {"X-Mockllama-Scenario": f"{name}-no-twin"},
    )
    assert status == 200
    assert headers["X-Mockllama-Decided-By"] == (
        f"usage output_tokens={tokens} {'>=' if cut else '<'} max_output_tokens={limit}"
    )
    if stream:
        pairs = sse_pairs(body)
        assert pairs[-1][0] == ("response.incomplete" if cut else "response.completed")
        response = pairs[-1][1]["response"]
    else:
        response = json.loads(body)
    assert response["status"] == ("incomplete" if cut else "completed")
    assert response["incomplete_details"] == ({"reason": "max_output_tokens"} if cut else None)
    assert response["output"][-1]["status"] == ("incomplete" if cut else "completed")


def test_the_fallback_rule_has_the_known_false_positive(no_twin_server):
    """text-exact-limit finished in exactly 8 of 8 tokens: usage alone calls it cut, the twin did not."""
    assert _usage("text-exact-limit", False) == (8, 8)
    assert yamlkit.chat_finish_reason("text-exact-limit", False) == "stop"
    server, scenarios = no_twin_server
    status, headers, body = call(server.url, "POST", "/fixed/v1/responses", b'{"model": "text-exact-limit-no-twin"}')
    assert status == 200 and json.loads(body)["status"] == "incomplete"
    assert headers["X-Mockllama-Decided-By"] == "usage output_tokens=8 >= max_output_tokens=8"


def test_with_the_twin_the_twin_decides(server):
    status, headers, body = call(server.url, "POST", "/fixed/v1/responses", b'{"model": "text-exact-limit"}')
    assert status == 200 and json.loads(body)["status"] == "completed"
    assert headers["X-Mockllama-Decided-By"] == "chat-twin finish_reason=stop"


FAILED_TWIN = b'{"error":{"code":500,"message":"the chat twin failed","type":"server_error"}}'


@pytest.fixture(scope="module")
def failed_twin_server(tmp_path_factory):
    """text-exact-limit with both chat twins answered 500 instead: the real Responses replies, and
    a twin that says nothing of how generation ended."""
    directory = tmp_path_factory.mktemp("failed-twin")
    data = yaml.safe_load(yamlkit.cassette_path("text-exact-limit").read_text(encoding="utf-8"))
    for interaction in data["interactions"]:
        if "/v1/chat/completions" in interaction["request"]["uri"]:
            interaction["response"] = {
                "status": {"code": 500, "message": "Internal Server Error"},
                "headers": {"Content-Type": ["application/json; charset=utf-8"]},
                "body": {"string": FAILED_TWIN.decode()},
            }
    (directory / "exact-limit-failed-twin.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    with BackgroundServer(create_app(load_scenarios([directory]))) as running:
        yield running


@pytest.mark.parametrize("stream", [False, True])
def test_a_failed_twin_keeps_the_reply_as_recorded_and_the_header_says_so(failed_twin_server, stream):
    """Issue 47 item 11: a twin answered HTTP 500 carries no finish_reason, and usage at the limit
    (8 of 8 tokens here) would call this finished reply cut. fixed keeps it as recorded instead."""
    assert _usage("text-exact-limit", stream) == (8, 8)
    body = json.dumps({"model": "exact-limit-failed-twin", "stream": stream}).encode()
    status, headers, reply = call(failed_twin_server.url, "POST", "/fixed/v1/responses", body)
    assert status == 200
    assert headers["X-Mockllama-Decided-By"] == "chat-twin failed (HTTP 500): kept as recorded"
    if stream:
        pairs = sse_pairs(reply)
        assert pairs[-1][0] == "response.completed"
        response = pairs[-1][1]["response"]
    else:
        response = json.loads(reply)
    assert response["status"] == "completed" and response["incomplete_details"] is None
    assert response["output"][-1]["status"] == "completed"
