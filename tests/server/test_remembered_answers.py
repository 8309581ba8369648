"""The replay route remembers each request's answer (server.app.replay_route): a request sent again
must get what deciding it afresh would give, and be journalled as the first was."""

from __future__ import annotations

import asyncio
import json

from aiohttp.test_utils import TestClient, TestServer

from mockllama.app import create_app
from mockllama.recordings.cassettes import bundled_cassette_dir, load_cassette
from mockllama.server.app import SETTINGS
from support.httpkit import call, post_json
from support.recordings import SCENARIOS

SEED = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0}


def test_a_request_sent_again_gets_the_same_reply_and_its_own_journal_entry(start_server):
    server = start_server()
    replies = [post_json(server.url, "/v1/responses", SEED) for _ in range(3)]
    assert [status for status, _, _ in replies] == [200] * 3
    assert len({body for _, _, body in replies}) == 1
    _, _, journal = call(server.url, "GET", "/_mockllama/journal")
    entries = json.loads(journal)["entries"]
    assert [(e["scenario"], e["body"], e["bytes_sent"], e["turn"], e["finished"]) for e in entries] == [
        ("text-cut-8", SEED, len(replies[0][2]), 1, True)
    ] * 3


def test_the_same_body_under_other_mockllama_headers_or_prefix_is_answered_for_them(server):
    """Each of mockllama's own headers, and the path's prefix, is part of what was asked."""

    def asked(path="/v1/responses", headers=None):
        status, reply_headers, body = post_json(server.url, path, SEED, headers)
        return status, reply_headers.get("X-Mockllama-Fault"), body

    status, _, body = asked()
    assert status == 200 and json.loads(body)["status"] == "completed"  # buggy, the default
    assert json.loads(asked(headers={"X-Mockllama-Behaviour": "fixed"})[2])["status"] == "incomplete"
    assert json.loads(asked("/spec/v1/responses")[2])["status"] == "incomplete"
    called = json.loads(asked(headers={"X-Mockllama-Scenario": "tool-cut-20"})[2])
    assert called["output"][0]["type"] == "function_call"
    status, fault, cut = asked(headers={"X-Mockllama-Fault": "truncate-json"})
    assert status == 200 and fault == "truncate-json" and len(cut) < len(body)
    assert asked(headers={"X-Mockllama-Behaviour": "strict"})[0] == 400  # a failure, every time
    assert asked(headers={"X-Mockllama-Behaviour": "strict"})[0] == 400
    assert asked() == (200, None, body)  # and the first answer is still the first answer


def test_a_recording_added_answers_a_request_that_was_answered_before():
    """Matcher.add (what record-on-miss calls) may change an answer: none remembered is given again."""
    copy = load_cassette(next(bundled_cassette_dir().rglob("text-cut-8.yaml")))
    copy.name = "text-cut-8-again"
    for interaction in copy.interactions:
        interaction.scenario = copy.name

    async def scenario_answering(client) -> str:
        response = await client.post("/v1/responses", json=SEED)
        await response.read()
        assert response.status == 200
        return response.headers["X-Mockllama-Scenario"]

    async def run() -> list[str]:
        app = create_app(dict(SCENARIOS))
        async with TestClient(TestServer(app)) as client:
            before = [await scenario_answering(client) for _ in range(2)]
            app[SETTINGS].matcher.add(copy)  # on the server's own loop, as the recorder does
            return before + [await scenario_answering(client) for _ in range(2)]

    assert asyncio.run(run()) == ["text-cut-8", "text-cut-8", "text-cut-8-again", "text-cut-8-again"]
