"""buggy replays every recording exactly: status, headers, body bytes and SSE framing."""

from __future__ import annotations

import openai
import pytest

from support.httpkit import call, chunks_on_the_wire, request_bytes, sse_pairs
from support.recordings import SCENARIOS, all_interactions, chosen

# Written out, not imported from the server: the connection-level headers of RFC 9110 section
# 7.6.1 (and the obsolete Keep-Alive, Proxy-Connection), plus the framing the server computes
# itself. A recording's values for these describe llama-server's connection, not the reply.
HOP_BY_HOP = {
    "connection",
    "content-length",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}


def _replay(server, interaction, behaviour="buggy"):
    return call(
        server.url,
        interaction.method,
        f"/{behaviour}{interaction.path}",
        request_bytes(interaction),
        chosen(interaction),
    )


@pytest.mark.parametrize(("scenario", "interaction"), all_interactions())
def test_buggy_body_status_and_headers_equal_the_recording(server, scenario, interaction):
    status, headers, body = _replay(server, interaction)
    assert status == interaction.status
    assert body == interaction.body
    assert headers["X-Mockllama-Behaviour"] == "buggy"
    assert headers["X-Mockllama-Scenario"] == scenario.name
    for name, value in interaction.headers:
        if name.lower() in HOP_BY_HOP:
            continue
        assert headers.get_all(name) == [value], name


@pytest.mark.parametrize(("scenario", "interaction"), all_interactions(lambda i: i.is_event_stream))
def test_buggy_stream_events_equal_the_recording_one_chunk_each(server, scenario, interaction):
    chunks = chunks_on_the_wire(
        server.url, f"/buggy{interaction.path}", request_bytes(interaction), chosen(interaction)
    )
    assert sse_pairs(b"".join(chunks)) == sse_pairs(interaction.body)
    # each SSE block travels as its own HTTP chunk, exactly as recorded, never as one blob
    assert chunks == [event.raw for event in interaction.events]
    assert len(chunks) > 3


def test_hop_by_hop_headers_are_computed_not_replayed(server, scenarios):
    interaction = scenarios["text-cut-8"].find("POST", "/v1/responses", False)
    status, headers, body = _replay(server, interaction)
    assert headers["Content-Length"] == str(len(body))
    assert headers.get("Connection") != "close"  # the recording said close; aiohttp keeps the connection
    stream = scenarios["text-cut-8"].find("POST", "/v1/responses", True)
    status, headers, body = _replay(server, stream)
    assert headers["Transfer-Encoding"] == "chunked"
    assert "Content-Length" not in headers


def test_content_length_is_that_of_the_body_sent_not_the_recorded_one(server):
    """fixed rewrites the body, so a replayed Content-Length would cut the reply or hang the client."""
    interaction = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False)
    recorded_length = dict((k.lower(), v) for k, v in interaction.headers)["content-length"]
    assert recorded_length == str(len(interaction.body))
    status, headers, body = _replay(server, interaction, "fixed")
    assert len(body) != len(interaction.body)
    assert headers.get_all("Content-Length") == [str(len(body))]


def test_only_the_hop_by_hop_headers_are_left_out(server):
    """Every other recorded header is replayed, including llama-server's empty CORS header."""
    interaction = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False)
    _, headers, _ = _replay(server, interaction)
    recorded = {name.lower() for name, _ in interaction.headers}
    assert recorded - HOP_BY_HOP <= {name.lower() for name in headers}
    assert "server" in recorded - HOP_BY_HOP


def test_seed_request_is_completed_with_the_openai_sdk(server, scenarios):
    request = dict(scenarios["text-cut-8"].find("POST", "/v1/responses", False).request_json)
    client = openai.OpenAI(base_url=server.base_url("buggy"), api_key="unused")
    response = client.responses.create(**request)
    assert response.status == "completed"
    assert response.incomplete_details is None
    assert response.output_text == "1. 1\n2. "
    assert response.usage.output_tokens == 8


def test_seed_request_stream_ends_completed_with_the_openai_sdk(server, scenarios):
    request = dict(scenarios["text-cut-8"].find("POST", "/v1/responses", True).request_json)
    client = openai.OpenAI(base_url=server.base_url("buggy"), api_key="unused")
    events = list(client.responses.create(**request))
    assert events[-1].type == "response.completed"
    assert events[-1].response.status == "completed"
    assert events[-1].response.incomplete_details is None
