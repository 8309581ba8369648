"""The bundled sweeps: every position a reply can be cut at, each a real recording, reached by a
request's own limit as a client sends it, by name, and past the end."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from mockllama.app import ServeOptions, create_app
from mockllama.cli import main
from mockllama.matching.pipeline import match_keys
from mockllama.recordings.cassettes import (
    RECORDING_SETS,
    CassetteError,
    load_cassette,
    load_scenarios,
    sweep_positions,
)
from mockllama.recordings.sweeps import split_position, sweep_of_file
from mockllama.wire import sse

# Every bundled sweep, by recording set: what the Done-when of issue 52 names.
SWEEPS = ("tool-call", "tool-two-calls", "text-reply", "thinking", "messages-tool-call")
LOADED = {name: load_scenarios([RECORDING_SETS[name]()], keys_of=match_keys) for name in RECORDING_SETS}


def positions(recordings: str, sweep: str) -> list:
    found = [scenario for scenario in LOADED[recordings].values() if scenario.sweep == sweep]
    return sorted(found, key=lambda scenario: scenario.limit)


def first_request(scenario):
    """The position's first recorded request (the non-streamed one its endpoint starts with)."""
    return next(i for i in scenario.interactions if i.method == "POST" and not i.stream)


def at_limit(body: dict, limit: int) -> bytes:
    """The request as a client writes it at another limit: only the limit changed."""
    key = "max_output_tokens" if "max_output_tokens" in body else "max_tokens"
    return json.dumps({**body, key: limit}).encode()


def output_tokens(body) -> int:
    usage = body["usage"]
    return usage.get("output_tokens", usage.get("completion_tokens"))


async def _answers(recordings: str, sweep: str, limits: list[int], stream: bool = False):
    """(limit, status, headers, body) for the sweep's request at each limit, unselected: a client
    that knows nothing of mockllama, its model "x"."""
    scenarios = LOADED[recordings]
    last = positions(recordings, sweep)[-1]
    interaction = next(i for i in last.interactions if i.method == "POST" and i.stream == stream)
    app = create_app(scenarios, ServeOptions(recordings=recordings, setup=last.setup))
    answers = []
    async with TestClient(TestServer(app)) as client:
        for limit in limits:
            reply = await client.post(interaction.path, data=at_limit(interaction.request_json, limit))
            answers.append((limit, reply.status, reply.headers, await reply.read()))
    return answers


@pytest.mark.parametrize("recordings", sorted(RECORDING_SETS))
@pytest.mark.parametrize("sweep", SWEEPS)
def test_every_limit_up_to_the_end_gets_the_recording_at_that_limit(recordings, sweep):
    found = positions(recordings, sweep)
    last = found[-1].limit
    assert [scenario.limit for scenario in found] == list(range(1, last + 1)), "a position is missing"
    for limit, status, headers, body in asyncio.run(_answers(recordings, sweep, list(range(1, last + 1)))):
        assert status == 200, body
        # the sweep's position, or another recording of the very same request (tool-two-calls-cut-70)
        assert LOADED[recordings][headers["X-Mockllama-Scenario"]].limit == limit
        assert headers["X-Mockllama-Selected-By"] == "match"
        assert output_tokens(json.loads(body)) == limit


@pytest.mark.parametrize("recordings", sorted(RECORDING_SETS))
@pytest.mark.parametrize("sweep", SWEEPS)
def test_every_streamed_position_answers_its_own_recording(recordings, sweep):
    found = positions(recordings, sweep)
    answers = asyncio.run(_answers(recordings, sweep, [scenario.limit for scenario in found], stream=True))
    for scenario, (_, status, headers, body) in zip(found, answers):
        assert status == 200
        served = LOADED[recordings][headers["X-Mockllama-Scenario"]]  # see the test above
        assert served.limit == scenario.limit
        recorded = next(i for i in served.interactions if i.stream and i.path == first_request(scenario).path)
        assert body == recorded.body  # buggy: the recording byte for byte
        assert sse.is_event_stream(body)


@pytest.mark.parametrize("sweep", SWEEPS)
def test_a_limit_past_the_end_gets_the_finished_reply(sweep):
    last = positions("stock", sweep)[-1]
    for _, status, headers, body in asyncio.run(_answers("stock", sweep, [last.limit + 1, 399, 100000])):
        assert status == 200
        assert headers["X-Mockllama-Scenario"] == last.name
        assert headers["X-Mockllama-Selected-By"] == "sweep-end"
        assert body == first_request(last).body
    assert last.stopped_by_limit() is False, "the last position is where the reply finishes by itself"


def test_a_position_is_chosen_by_name_and_a_sweep_s_name_takes_the_request_s_limit():
    asyncio.run(_chosen_by_name())


async def _chosen_by_name():
    app = create_app(LOADED["stock"], ServeOptions())
    async with TestClient(TestServer(app)) as client:
        named = await client.post("/fixed/v1/responses", json={"model": "tool-call@17", "input": "anything"})
        assert named.headers["X-Mockllama-Scenario"] == "tool-call@17"
        assert (await named.json())["status"] == "incomplete"
        by_limit = await client.post(
            "/v1/responses", json={"input": "x"}, headers={"X-Mockllama-Scenario": "tool-call"}
        )
        assert by_limit.headers["X-Mockllama-Scenario"] == positions("stock", "tool-call")[-1].name
        limited = await client.post("/v1/responses", json={"model": "tool-call", "input": "x", "max_output_tokens": 9})
        assert limited.headers["X-Mockllama-Scenario"] == "tool-call@9"
        past = await client.post("/v1/responses", json={"model": "tool-call", "input": "x", "max_output_tokens": 999})
        assert past.headers["X-Mockllama-Scenario"] == positions("stock", "tool-call")[-1].name


def test_a_near_miss_names_the_sweep_once():
    asyncio.run(_near_miss())


async def _near_miss():
    last = positions("stock", "tool-call")[-1]
    body = dict(first_request(last).request_json)
    body["input"] = [dict(item) for item in body["input"]]
    body["input"][0]["content"] = "Write the text 'Hello, moon!' to the file /tmp/hello.txt."
    app = create_app(LOADED["stock"], ServeOptions())
    async with TestClient(TestServer(app)) as client:
        reply = await client.post("/v1/responses", json=body)
        assert reply.status == 404
        message = (await reply.json())["error"]["message"]
    assert f"a position of the sweep 'tool-call', tool-call@1 to {last.name}" in message
    assert message.count("of the sweep 'tool-call'") == 1


def test_scenarios_shows_a_sweep_as_one_line_with_its_range():
    result = CliRunner().invoke(main, ["scenarios"])
    assert result.exit_code == 0, result.output
    last = positions("stock", "tool-call")[-1].limit
    (line,) = [line for line in result.output.splitlines() if line.startswith("tool-call@")]
    assert line.startswith(f"tool-call@1-{last} ")
    assert f"length 1-{last - 1}, tool_calls {last}" in line
    assert "tool-call@17" not in result.output


def test_a_sweep_file_is_named_for_its_sweep_and_a_position_for_its_limit():
    assert sweep_of_file(RECORDING_SETS["stock"]() / "a" / "tool-call.sweep.yaml") == "tool-call"
    assert sweep_of_file(RECORDING_SETS["stock"]() / "tool-call.yaml") is None
    assert split_position("tool-call@17") == ("tool-call", 17)
    for name in ("tool-call", "tool-call@", "@3", "tool-call@017", "tool-call@x"):
        assert split_position(name) is None


def test_a_sweep_interaction_without_a_limit_is_refused(tmp_path):
    source = positions("stock", "tool-call")[0].source
    text = source.read_text(encoding="utf-8").replace('"max_output_tokens": 1,', "", 1)
    broken = tmp_path / "broken.sweep.yaml"
    broken.write_text(text, encoding="utf-8")
    with pytest.raises(CassetteError, match="asks for no token limit"):
        sweep_positions(load_cassette(broken))


def generated(scenario) -> list[tuple[str, str]]:
    """What the position's non-streamed reply holds so far, item by item: (type, text or arguments)."""
    body = json.loads(first_request(scenario).body)
    if "content" in body and "output" not in body:  # /v1/messages
        return [(block["type"], block.get("text") or json.dumps(block.get("input"))) for block in body["content"]]
    items = []
    for item in body["output"]:
        if item["type"] == "function_call":
            items.append(("function_call", item["name"] + item["arguments"]))
        else:
            items.append((item["type"], "".join(part.get("text", "") for part in item.get("content") or [])))
    return items


def grows_into(cut: list, finished: list) -> bool:
    """Every item but the last as the finished reply has it, and the last a beginning of its own."""
    if not cut:
        return True
    if len(cut) > len(finished) or cut[:-1] != finished[: len(cut) - 1]:
        return False
    (kind, text), (finished_kind, finished_text) = cut[-1], finished[len(cut) - 1]
    return kind == finished_kind and finished_text.startswith(text)


@pytest.mark.parametrize("recordings", sorted(RECORDING_SETS))
@pytest.mark.parametrize("sweep", SWEEPS)
def test_each_cut_reply_is_the_beginning_of_the_finished_one_but_where_the_parser_differs(recordings, sweep):
    """Greedy decoding: position N is the first N tokens of the finished reply. Where the server's
    own parser shows them otherwise (the tool call's markup sent as text before the call is
    recognised, /v1/messages' cut arguments sent as {}), the items are of another kind or empty."""
    found = positions(recordings, sweep)
    finished = generated(found[-1])
    unlike = {}
    for scenario in found:
        cut = generated(scenario)
        if not grows_into(cut, finished):
            unlike[scenario.limit] = cut
    for limit, cut in unlike.items():
        kinds = [kind for kind, _ in cut]
        assert kinds != [kind for kind, _ in finished][: len(kinds)] or any(text in ("{}", "") for _, text in cut), (
            limit,
            cut,
        )


def test_an_unknown_name_lists_each_sweep_once_with_how_its_positions_are_named():
    asyncio.run(_unknown_name())


async def _unknown_name():
    app = create_app(LOADED["stock"], ServeOptions())
    async with TestClient(TestServer(app)) as client:
        reply = await client.post("/v1/responses", json={"input": "x"}, headers={"X-Mockllama-Scenario": "tool-cal"})
        message = (await reply.json())["error"]["message"]
    assert reply.status == 404
    assert "tool-call (or tool-call@N, N 1-37)" in message and "thinking (or thinking@N, N 1-41)" in message
    assert "tool-call@17" not in message
