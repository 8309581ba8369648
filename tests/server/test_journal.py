"""The request journal: GET/DELETE /_mockllama/journal, its filters and bounds, with the openai SDK."""

from __future__ import annotations

import asyncio
import json
import threading
from types import SimpleNamespace

import openai
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from mockllama.server.journal import DEFAULT_BODY_CAP, Journal, Trace
from support.httpkit import call, post_json

JOURNAL = "/_mockllama/journal"


def read_journal(url: str, query: str = "") -> dict:
    status, _, body = call(url, "GET", JOURNAL + query)
    assert status == 200, body
    return json.loads(body)


@pytest.fixture
def fresh(start_server):
    """A server of its own, so that no other test's requests are in its journal."""
    return start_server()


def test_sdk_requests_are_journalled_in_order_with_what_was_sent(fresh):
    client = openai.OpenAI(base_url=fresh.base_url("fixed"), api_key="unused", max_retries=0)
    client.responses.create(
        model="x", input="Count from 1 to 200, separated by spaces.", max_output_tokens=8, temperature=0
    )
    events = list(client.responses.create(model="tool-cut-20", input="anything", stream=True))
    entries = read_journal(fresh.url)["entries"]
    assert [e["id"] for e in entries] == [1, 2]
    first, second = entries
    assert (first["method"], first["path"], first["behaviour"]) == ("POST", "/fixed/v1/responses", "fixed")
    assert (first["scenario"], first["selected_by"], first["status"]) == ("text-cut-8", "match", 200)
    assert first["body"]["max_output_tokens"] == 8 and first["body"]["input"].startswith("Count from 1")
    assert first["stream"] is False and first["finished"] is True and first["bytes_sent"] > 100
    assert first["turn"] == 1 and first["fault"] is None and first["error"] is None
    assert (second["scenario"], second["selected_by"], second["stream"]) == ("tool-cut-20", "model", True)
    assert second["finished"] is True and events[-1].type == "response.incomplete"
    assert second["bytes_sent"] == sum(len(e.raw) for e in _recorded_stream(fresh, "tool-cut-20", "fixed"))
    assert first["time"] <= second["time"]


def _recorded_stream(server, scenario, behaviour):
    from mockllama.behaviours.replay import reply_for
    from support.recordings import SCENARIOS

    interaction = SCENARIOS[scenario].find("POST", "/v1/responses", True)
    return reply_for(behaviour, interaction, SCENARIOS[scenario]).events


def test_errors_are_journalled_with_their_message_and_body(fresh):
    client = openai.OpenAI(base_url=fresh.base_url("buggy"), api_key="unused", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="x", input="nothing recorded says this")
    call(fresh.url, "POST", "/v1/responses", b"{not json")
    call(fresh.url, "GET", "/v1/responses")  # wrong method
    call(fresh.url, "GET", "/no/such/route")
    entries = read_journal(fresh.url)["entries"]
    assert [(e["status"], e["path"]) for e in entries] == [
        (404, "/buggy/v1/responses"),
        (400, "/v1/responses"),
        (405, "/v1/responses"),
        (404, "/no/such/route"),
    ]
    missed = entries[0]
    assert missed["body"] == {"model": "x", "input": "nothing recorded says this"}
    assert missed["scenario"] is None and missed["selected_by"] is None
    assert "Nearest scenario" in missed["error"]
    assert entries[1]["body"] == "{not json" and "not valid JSON" in entries[1]["error"]
    assert entries[2]["body"] is None and entries[2]["method"] == "GET"


def test_the_journal_and_the_teaching_page_are_not_journalled(fresh):
    post_json(fresh.url, "/v1/responses", {"model": "text-cut-8", "input": "x"})
    for path in (JOURNAL, "/", "/_mockllama/scenarios.json", "/_mockllama/static/app.js"):
        call(fresh.url, "GET", path)
    read_journal(fresh.url)
    assert [e["path"] for e in read_journal(fresh.url)["entries"]] == ["/v1/responses"]


def test_filters_by_scenario_and_since(fresh):
    for model in ("text-cut-8", "tool-cut-20", "text-cut-8"):
        post_json(fresh.url, "/v1/responses", {"model": model, "input": "x"})
    assert [e["id"] for e in read_journal(fresh.url, "?scenario=text-cut-8")["entries"]] == [1, 3]
    assert [e["id"] for e in read_journal(fresh.url, "?since=1")["entries"]] == [2, 3]
    assert [e["id"] for e in read_journal(fresh.url, "?scenario=text-cut-8&since=1")["entries"]] == [3]
    assert read_journal(fresh.url, "?since=3") == {"size": 1000, "last_id": 3, "entries": []}


def test_delete_clears_and_numbering_goes_on(fresh):
    post_json(fresh.url, "/v1/responses", {"model": "text-cut-8", "input": "x"})
    status, _, body = call(fresh.url, "DELETE", JOURNAL)
    assert status == 200 and json.loads(body) == {"cleared": True, "last_id": 1}
    assert read_journal(fresh.url)["entries"] == []
    post_json(fresh.url, "/v1/responses", {"model": "text-cut-8", "input": "x"})
    assert [e["id"] for e in read_journal(fresh.url)["entries"]] == [2]


@pytest.mark.parametrize("query", ["?since=-1", "?since=abc"])
def test_a_bad_since_is_a_400_in_llama_server_shape(fresh, query):
    status, _, body = call(fresh.url, "GET", JOURNAL + query)
    assert status == 400
    error = json.loads(body)["error"]
    assert error["type"] == "invalid_request_error" and "?since=" in error["message"]


def test_a_wrong_method_on_the_journal_is_a_405(fresh):
    status, _, body = call(fresh.url, "POST", JOURNAL, b"{}")
    assert status == 405 and json.loads(body)["error"]["code"] == 405


def test_the_ring_keeps_only_the_last_n(start_server):
    server = start_server(journal_size=3)
    for index in range(5):
        post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": f"request {index}"})
    journal = read_journal(server.url)
    assert journal["size"] == 3 and journal["last_id"] == 5
    assert [e["body"]["input"] for e in journal["entries"]] == ["request 2", "request 3", "request 4"]


def test_size_zero_journals_nothing(start_server):
    server = start_server(journal_size=0)
    post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": "x"})
    assert read_journal(server.url) == {"size": 0, "last_id": 0, "entries": []}


def test_large_bodies_are_capped_and_flagged(fresh):
    big = {"model": "text-cut-8", "input": "y" * (DEFAULT_BODY_CAP * 2)}
    post_json(fresh.url, "/v1/responses", big)
    entry = read_journal(fresh.url)["entries"][0]
    assert entry["body_truncated"] is True and entry["status"] == 200 and entry["body_dropped"] is False
    assert isinstance(entry["body"], str) and len(entry["body"].encode()) == DEFAULT_BODY_CAP


def test_a_coding_agents_20_kb_request_is_kept_whole(fresh):
    """Codex's first request is about 20 KB: its instructions and every tool's schema."""
    tools = [
        {"type": "function", "name": f"tool_{n}", "description": "d" * 400, "parameters": {"type": "object"}}
        for n in range(45)
    ]
    sent = {"model": "text-cut-8", "input": "Count from 1 to 200, separated by spaces.", "tools": tools}
    assert 20_000 < len(json.dumps(sent)) < 25_000
    post_json(fresh.url, "/v1/responses", sent)
    entry = read_journal(fresh.url)["entries"][0]
    assert entry["body"] == sent and entry["body_truncated"] is False and entry["body_dropped"] is False


def test_the_bodies_together_stay_within_the_budget_the_oldest_let_go_first(start_server):
    server = start_server(journal_size=100, journal_body_bytes=30_000, journal_bytes=100_000)
    for index in range(20):  # 20 bodies of 24 KB: 480 KB, nearly five times the budget
        post_json(server.url, "/v1/responses", {"model": "text-cut-8", "input": f"{index:02} " + "z" * 24_000})
    entries = read_journal(server.url)["entries"]
    assert [e["id"] for e in entries] == list(range(1, 21))  # every entry kept
    kept = [e for e in entries if not e["body_dropped"]]
    assert [e["id"] for e in kept] == [17, 18, 19, 20]  # the newest bodies that fit
    assert sum(len(json.dumps(e["body"])) for e in kept) <= 100_000
    for entry in entries[:16]:
        assert entry["body"] is None and entry["status"] == 200 and entry["scenario"] == "text-cut-8"
    assert [e["body"]["input"][:2] for e in kept] == ["16", "17", "18", "19"]


def test_bodies_the_ring_has_let_go_leave_its_count_of_body_bytes():
    """A ring of 3 holds at most 3 bodies: those of entries gone from it are counted no more."""
    journal = Journal(3, body_cap=100, body_budget=10_000)
    for index in range(10):
        trace = Trace()
        trace.raw = b"x" * 100
        journal.keep(make_mocked_request("POST", f"/{index}"), web.Response(), trace)
    assert [(e.id, e.body_dropped, len(e.raw_body)) for e in journal.entries()] == [
        (8, False, 100),
        (9, False, 100),
        (10, False, 100),
    ]
    assert journal._body_bytes == 300


def test_a_cleared_journal_starts_its_budget_afresh():
    journal = Journal(10, body_cap=100, body_budget=250)
    for _ in range(2):
        for index in range(3):
            trace = Trace()
            trace.raw = b"x" * 100
            journal.keep(make_mocked_request("POST", f"/{index}"), web.Response(), trace)
        assert [e.body_dropped for e in journal.entries()] == [True, False, False]
        journal.clear()


def test_a_client_that_goes_away_mid_stream_is_journalled_as_unfinished(start_server):
    server = start_server(pace=1.0)  # recorded timing: the poem stream takes ~0.6 s

    async def leave_early():
        async with openai.AsyncOpenAI(base_url=server.base_url("buggy"), api_key="unused", max_retries=0) as client:
            stream = await client.responses.create(model="poem-finishes", input="x", stream=True)
            async for _ in stream:
                break
            await stream.close()

    asyncio.run(leave_early())
    for _ in range(100):  # the server notices the reset on its next write
        entries = read_journal(server.url)["entries"]
        if entries:
            break
        threading.Event().wait(0.05)
    (entry,) = entries
    assert entry["stream"] is True and entry["finished"] is False
    full = sum(len(e.raw) for e in _recorded_stream(server, "poem-finishes", "buggy"))
    assert 0 < entry["bytes_sent"] < full


def _keep_plain_entry(journal: Journal, path: str) -> None:
    """What the server's hot path keeps of a finished 200 to a POST with no body: the fields as
    seen, read later."""
    journal.keep(SimpleNamespace(method="POST", path=path), web.Response(), Trace())


def test_threads_reading_while_the_server_writes_see_whole_entries():
    journal = Journal(50)

    def writer():
        for index in range(2000):
            _keep_plain_entry(journal, f"/{index}")

    thread = threading.Thread(target=writer)
    thread.start()
    while thread.is_alive():
        entries = journal.entries()
        ids = [e.id for e in entries]
        assert ids == sorted(ids) and len(ids) <= 50 and all(e.path == f"/{e.id - 1}" for e in entries)
    thread.join()
    assert journal.last_id == 2000 and [e.id for e in journal.entries()] == list(range(1951, 2001))


def test_a_reader_is_never_handed_an_id_whose_entry_is_not_in_the_ring_yet():
    # The writer takes no lock, so a reader on another thread may read at any step of it; this
    # journal is read at the worst ones: just before and just after a slot's references are
    # replaced, and just before each new last id is published. A client polling ?since= with an id
    # handed out before its entry was there would skip that entry for good; an entry read half
    # written would mix two requests.
    reads = []

    def read_whole(journal: Journal) -> None:
        entries, last_id = journal.snapshot()
        assert all(entry.id <= last_id for entry in entries), (entries, last_id)
        assert all(entry.path == f"/{entry.id}" for entry in entries), entries
        reads.append(last_id)

    class ReadingJournal(Journal):
        @property
        def _last_id(self) -> int:
            return self.__dict__.get("published", 0)

        @_last_id.setter
        def _last_id(self, number: int) -> None:
            if number:
                read_whole(self)
                assert self.last_id < number
            self.__dict__["published"] = number

    class ReadingReferences(list):
        def __setitem__(self, index, value):
            read_whole(journal)
            super().__setitem__(index, value)
            read_whole(journal)

    journal = ReadingJournal(3)  # a ring smaller than the entries: each slot is written over
    journal._refs = ReadingReferences(journal._refs)
    for number in range(1, 9):
        _keep_plain_entry(journal, f"/{number}")
    assert journal.last_id == 8 and [entry.id for entry in journal.entries(since=5)] == [6, 7, 8]
    assert len(reads) == 8 * 3  # before and after each slot's references, before each publish


def test_the_journal_holds_one_string_per_path_not_one_per_request():
    """What makes journalling cheap under load (server.journal says why): a path sent again is held
    once, however many requests sent it, and a flood of distinct paths is held each by its own entry."""
    journal = Journal(100)
    for index in range(50):
        # each request's path a str of its own, as aiohttp's parser makes one per request
        request = SimpleNamespace(method="POST", path="".join(["/v1/", "responses"[: 5 + index % 2]]))
        journal.keep(request, web.Response(), Trace())
    paths = {entry.path: set() for entry in journal.entries()}
    for entry in journal.entries():
        paths[entry.path].add(id(entry.path))
    assert {path: len(held) for path, held in paths.items()} == {"/v1/respo": 1, "/v1/respon": 1}
    for index in range(3000):
        journal.keep(make_mocked_request("POST", f"/{index}"), web.Response(), Trace())
    assert [entry.path for entry in journal.entries()] == [f"/{index}" for index in range(2900, 3000)]
    assert len(journal._names) == 1024  # the strings held for all, bounded
    long = "/" + "x" * 300
    fresh_journal = Journal(10)
    _keep_plain_entry(fresh_journal, long)
    assert fresh_journal.entries()[0].path == long and long not in fresh_journal._names  # nor held past 256 characters
