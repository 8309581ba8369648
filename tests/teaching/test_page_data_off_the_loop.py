"""The teaching page's data is made off the event loop, once however many ask: while it is being
made, the server answers everything else."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

from mockllama.app import create_app
from mockllama.server.background import BackgroundServer
from mockllama.teaching import explain
from support.httpkit import call, post_json
from support.recordings import SCENARIOS


def test_other_clients_are_answered_while_the_page_data_is_made(monkeypatch):
    release, made = threading.Event(), []
    real = explain.stories

    def slow_stories(scenarios):
        made.append(threading.current_thread().name)
        assert release.wait(timeout=30), "the test never released the build"
        return real(scenarios)

    monkeypatch.setattr(explain, "stories", slow_stories)
    with BackgroundServer(create_app(SCENARIOS)) as server, ThreadPoolExecutor(3) as pool:
        asked = [pool.submit(call, server.url, "GET", "/_mockllama/scenarios.json") for _ in range(3)]
        status, _, body = post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": "x"})
        assert status == 200 and json.loads(body)["object"] == "response"  # answered while the build waits
        assert not any(future.done() for future in asked)
        release.set()
        answers = [future.result(timeout=60) for future in asked]
    assert [status for status, _, _ in answers] == [200, 200, 200]
    assert len({body for _, _, body in answers}) == 1
    assert len(made) == 1 and made[0] != "mockllama-server"  # once, and not on the server's loop thread
