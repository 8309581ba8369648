"""Python clients, unmodified and unselected, against `mockllama serve`: the matrix of
docs/python-clients.md made afresh and compared, and what it shows held true. The matrix runs on
every server mockllama serves: llama-server's own behaviours (what its tests here state as facts of
llama-server and a correct server) and each other server's variant (held to what that server sends).

The clients are pinned in the `clients` extra (scripts/test installs it) and, for llama-index, the
`clients-llamaindex` extra, whose virtualenv tests/support/python_clients.py makes and keeps.
MOCKLLAMA_CLIENTS=0 switches this tier off; switched on, a missing client fails it, never skips.
"""

from __future__ import annotations

import json
import os
import re
from importlib import metadata

import pytest

from mockllama.behaviours.variants import own_behaviours
from mockllama.pytest_plugin.session import variant_url_behaviours
from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from support import python_client_sweep, python_clients
from support.client_outcomes import classify, recorded
from support.httpkit import chosen_reply, sse_pairs
from support.python_clients import PAGE, WRITE, pins, render, servers, serving, table_in

CUT = "cut text"
TOOL = "tool request"
CUT_CALL = "cut call, chosen"
PARSING_CALL = "cut call whose arguments parse, chosen"
FINISHED = "finished"


def _name_and_version(pin: str) -> tuple[str, str]:
    name, version = re.sub(r"\[.*\]", "", pin).split("==")
    return name, version


def _switched_on() -> None:
    if os.environ.get("MOCKLLAMA_CLIENTS") == "0":
        pytest.skip("MOCKLLAMA_CLIENTS=0: the Python client matrix is switched off")
    for pin in pins("clients"):
        name, version = _name_and_version(pin)
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            pytest.fail(f'{name} {version} is needed, not {installed}: pip install ".[clients]"; scripts/test does')


@pytest.fixture(scope="module")
def lines():
    _switched_on()
    with serving() as url:
        return python_clients.observe(url)


@pytest.fixture(scope="module")
def sweep():
    """The sweep view: (its lines, the positions' recordings, its rows), one client process each."""
    _switched_on()
    recordings = python_client_sweep.positions()
    with serving() as url:
        swept = python_client_sweep.observe(url, max(recordings))
    return swept, recordings, python_client_sweep.rows(swept, recordings)


@pytest.fixture(scope="module")
def seen(lines):
    """(client, call, kind, behaviour) -> the line."""
    return {(x["client"], x["call"], x["kind"], x["behaviour"]): x for x in lines if "call" in x}


OWN = own_behaviours()  # llama-server's (buggy) and the honest ones: no other server's variant


def outcomes(seen, client: str, call: str, kind: str, behaviours=OWN) -> dict[str, dict]:
    """behaviour -> the line, for one client's call (named by its start) and kind, in ``behaviours``."""
    found = {b: x for (c, name, k, b), x in seen.items() if c == client and name.startswith(call) and k == kind}
    assert sorted(found) == sorted(servers()), (client, call, kind, sorted(found))
    return {behaviour: found[behaviour] for behaviour in behaviours}


def served(server, behaviour: str, line: dict, path: str, stream: bool = False) -> bytes:
    """What ``behaviour`` sends on ``path`` for the recording ``line``'s first request reached."""
    _, scenario, _ = line["reached"][0]
    return chosen_reply(server.url, behaviour, SCENARIOS[scenario], path, stream)


SCENARIOS = load_scenarios([bundled_cassette_dir()])


def scenarios(line) -> list:
    return [(status, scenario, selected_by) for status, scenario, selected_by in line["reached"]]


def test_the_page_matrix_matches_a_fresh_run(lines):
    assert table_in(PAGE.read_text()) == render(lines), f"run: {WRITE}"


def test_the_matrix_names_the_pinned_versions(lines):
    pinned = {extra: dict(_name_and_version(pin) for pin in pins(extra)) for extra in ("clients", "clients-llamaindex")}
    named = [line for line in lines if "versions" in line]
    assert len(named) == len(python_clients.CLIENTS)
    for line in named:
        extra = "clients-llamaindex" if line["client"] == "llama-index" else "clients"
        for name, version in line["versions"].items():
            assert pinned[extra][name] == version, (line["client"], name)


def test_the_page_holds_no_ids_addresses_or_timings():
    table = table_in(PAGE.read_text())
    for leak in (r"\b(resp|msg|fc|call|toolu|chatcmpl)_[A-Za-z0-9]{8,}", r"0x[0-9a-f]{6,}", r"\d+\.\d+ ?m?s\b"):
        assert not re.search(leak, table), leak


def test_every_call_is_run_on_every_server(seen):
    assert sorted(servers()) == sorted(variant_url_behaviours())
    calls = {(c, name, k) for c, name, k, _ in seen}
    assert len(calls) > 100
    for client, call, kind in calls:
        assert len(outcomes(seen, client, call, kind, servers())) == len(variant_url_behaviours())


def test_the_page_shows_each_client_against_each_server():
    """Per client, a row per server in its table of server × call, and a line per call saying which
    servers fool it."""
    table = table_in(PAGE.read_text())
    for part in table.split("\n### ")[1:]:
        rows = [line for line in part.splitlines() if line.startswith("| ") and not line.startswith(("| `", "| ---"))]
        shown = [row.split(" | ")[0].removeprefix("| ") for row in rows[1 : 1 + len(servers())]]
        assert shown == servers(), part.splitlines()[0]
        assert re.search(r"^- .*: fooled by ", part, re.MULTILINE), part.splitlines()[0]


def test_each_clients_own_text_request_reaches_a_cut_text_recording_unselected(seen):
    for (client, call, kind, behaviour), line in seen.items():
        if kind == CUT:
            ((status, scenario, selected_by),) = scenarios(line)
            assert (status, selected_by) == (200, "match"), (client, call, behaviour, line["reached"])
            assert re.fullmatch(r"(text|messages)-cut-\d+.*", scenario), (client, call, scenario)


def test_each_clients_own_tool_request_is_answered_by_a_recording_made_from_a_request_like_it(seen):
    for (client, call, kind, behaviour), line in seen.items():
        if kind == TOOL:
            assert [status for status, _, _ in scenarios(line)][:1] == [200], (client, call, behaviour, line)
            assert scenarios(line)[0][2] == "match"


def test_a_chosen_cut_call_is_reached_by_name(seen):
    for (_, _, kind, _), line in seen.items():
        if kind in (CUT_CALL, PARSING_CALL):
            first = scenarios(line)[0]
            assert first[0] == 200 and first[1] in ("tool-cut-20", "tool-cut-30", "messages-tool-forced-cut-20"), line
            assert first[2] in ("model", "header"), line


@pytest.mark.parametrize(
    ("client", "call", "field"),
    [
        ("openai", "`responses.create`", "`status` "),
        ("LangChain", "`invoke`, `use_responses_api=True`", "`response_metadata['status']` "),
        ("LangChain", "`stream`, `use_responses_api=True`", "`response_metadata['status']` "),
        ("litellm", "`responses`", "`status` "),
        ("llama-index", "`OpenAIResponses.chat`", "`raw.status` "),
        ("haystack", "`OpenAIResponsesChatGenerator.run`", "`meta['status']` "),
    ],
)
def test_a_responses_status_says_completed_for_a_cut_reply_only_on_llama_server(seen, client, call, field):
    for behaviour, line in outcomes(seen, client, call, CUT).items():
        said = "completed" if behaviour == "buggy" else "incomplete"
        assert line["says"].startswith(field + said), (behaviour, line["says"])
    for line in outcomes(seen, client, call, FINISHED).values():
        assert line["says"].startswith(field + "completed"), line["says"]


@pytest.mark.parametrize(
    ("client", "call", "field", "kinds"),
    [
        ("openai", "`chat.completions.create`", "`finish_reason` length", (CUT, CUT_CALL)),
        ("LangChain", "`invoke`, chat", "`response_metadata['finish_reason']` length", (CUT, CUT_CALL)),
        ("litellm", "`completion`", "`finish_reason` length", (CUT, CUT_CALL)),
        ("pydantic-ai", "`run`, chat model", "`finish_reason` length", (CUT,)),  # a cut call raises: below
        ("llama-index", "`OpenAI.chat`", "`raw.choices[0].finish_reason` length", (CUT, CUT_CALL)),
        ("haystack", "`OpenAIChatGenerator.run`", "`meta['finish_reason']` length", (CUT, CUT_CALL)),
        ("anthropic", "`messages.create`", "`stop_reason` max_tokens", (CUT, CUT_CALL)),
    ],
)
def test_the_chat_and_messages_routes_say_cut_in_every_behaviour_of_llama_server(seen, client, call, field, kinds):
    for kind in kinds:
        for behaviour, line in outcomes(seen, client, call, kind).items():
            assert field in line["says"], (kind, behaviour, line["says"])


def test_langchains_stream_repairs_a_cut_call_that_invoke_refuses_on_every_server(seen):
    for call in ("`invoke`, `use_responses_api=True`", "`invoke`, chat"):
        for line in outcomes(seen, "LangChain", call, CUT_CALL, servers()).values():
            assert line["tool"] == "in `invalid_tool_calls`"
    for call in ("`stream`, `use_responses_api=True`", "`stream`, chat"):
        for line in outcomes(seen, "LangChain", call, CUT_CALL, servers()).values():
            assert line["tool"] == "in `tool_calls`: {'path': '/tmp/hello.txt'}"


def test_openai_agents_raises_on_a_cut_reply_only_from_a_correct_servers_responses(seen):
    for behaviour, line in outcomes(seen, "openai-agents", "`Runner.run`, Responses model", CUT).items():
        if behaviour == "buggy":
            assert line["says"] == "`final_output` `'1. 1\\n2. '`"
        else:
            assert line["says"].startswith("raises ModelBehaviorError"), behaviour
    for line in outcomes(seen, "openai-agents", "`Runner.run`, chat model", CUT).values():
        assert line["says"] == "`final_output` `'1. 1\\n2. '`"


def test_agents_run_a_cut_call_whose_arguments_parse(seen):
    """Every agent runs tool-cut-30's call on llama-server; pydantic-ai and haystack's Agent on a
    correct server too."""
    agents = {
        ("openai-agents", "`Runner.run`, Responses model"): {"buggy"},
        ("openai-agents", "`Runner.run`, chat model"): set(OWN),
        ("pydantic-ai", "`run`, Responses model"): set(OWN),
        ("pydantic-ai", "`run`, chat model"): set(OWN),
        ("haystack", "`Agent.run`"): set(OWN),
    }
    for (client, call), running in agents.items():
        for behaviour, line in outcomes(seen, client, call, PARSING_CALL).items():
            assert line["tool"] == ("ran 1×" if behaviour in running else "not run"), (client, call, behaviour)
        for line in outcomes(seen, client, call, CUT_CALL).values():  # arguments that do not parse: never
            assert line["tool"] == "not run", (client, call)


def test_haystacks_agent_asks_again_after_a_cut_call_only_on_llama_server(seen):
    lines = outcomes(seen, "haystack", "`Agent.run`", CUT_CALL)
    assert [s for _, s, _ in scenarios(lines["buggy"])] == ["tool-cut-20"] * 3  # max_agent_steps=3
    for behaviour in OWN:
        if behaviour != "buggy":
            assert [s for _, s, _ in scenarios(lines[behaviour])] == ["tool-cut-20"]


def test_the_openai_stream_helper_reads_only_the_spec_stream(seen):
    lines = outcomes(seen, "openai", "`responses.stream()`", FINISHED, servers())
    for behaviour, line in lines.items():
        if behaviour == "spec":
            assert line["stream"] == "parses"
        else:
            assert line["says"] == "raises TypeError: list indices must be integers or slices, not NoneType"
    assert outcomes(seen, "openai", "`responses.stream()`", CUT)["spec"]["says"] == (
        "raises RuntimeError: Didn't receive a `response.completed` event."
    )


def test_anthropic_gets_a_cut_tool_use_with_empty_input(seen):
    for line in outcomes(seen, "anthropic", "`messages.create`", CUT_CALL, servers()).values():
        assert line["tool"] == "`tool_use`, `input` {}" and "`stop_reason` max_tokens" in line["says"]


def test_pydantic_ai_raises_incomplete_tool_call_when_the_reply_says_cut(seen):
    """On chat in every behaviour, on Responses where the status is honest; llama-server's
    Responses reply makes it retry the tool instead (retries=0: it gives up)."""
    for model in ("`run`, chat model", "`run`, Responses model"):
        for behaviour, line in outcomes(seen, "pydantic-ai", model, CUT_CALL).items():
            expected = (
                "UnexpectedModelBehavior"
                if (behaviour, model) == ("buggy", "`run`, Responses model")
                else ("IncompleteToolCall")
            )
            assert line["says"].startswith(f"raises {expected}:"), (model, behaviour, line["says"])


# --- every other server's variant: each client held to what that server sends ---------------------

RESPONSES_CALLS = (
    ("openai", "`responses.create`", "`status` "),
    ("LangChain", "`invoke`, `use_responses_api=True`", "`response_metadata['status']` "),
    ("litellm", "`responses`", "`status` "),
    ("llama-index", "`OpenAIResponses.chat`", "`raw.status` "),
    ("haystack", "`OpenAIResponsesChatGenerator.run`", "`meta['status']` "),
)
CHAT_CALLS = (
    ("openai", "`chat.completions.create`", "`finish_reason` "),
    ("LangChain", "`invoke`, chat", "`response_metadata['finish_reason']` "),
    ("litellm", "`completion`", "`finish_reason` "),
    ("llama-index", "`OpenAI.chat`", "`raw.choices[0].finish_reason` "),
    ("haystack", "`OpenAIChatGenerator.run`", "`meta['finish_reason']` "),
)


@pytest.mark.parametrize(("client", "call", "field"), RESPONSES_CALLS)
def test_a_responses_client_reports_the_status_each_server_sends(seen, server, client, call, field):
    """A null status shows as None, or, in LangChain's response_metadata, which drops nulls, as absent."""
    for kind in (CUT, CUT_CALL, PARSING_CALL, FINISHED):
        for behaviour, line in outcomes(seen, client, call, kind, servers()).items():
            status = json.loads(served(server, behaviour, line, RESPONSES_PATH)).get("status")
            shown = ("absent" if client == "LangChain" else "None") if status is None else status
            assert line["says"].startswith(f"{field}{shown}"), (kind, behaviour, status, line["says"])


@pytest.mark.parametrize(("client", "call", "field"), CHAT_CALLS)
def test_a_chat_client_reports_the_finish_reason_each_server_sends(seen, server, client, call, field):
    """As sent, but for litellm, which calls a reply holding a tool call that ended "stop"
    "tool_calls" (inspect_ai's cut call)."""
    for kind in (CUT, CUT_CALL, PARSING_CALL, FINISHED):
        for behaviour, line in outcomes(seen, client, call, kind, servers()).items():
            choice = json.loads(served(server, behaviour, line, CHAT_PATH))["choices"][0]
            reason = choice["finish_reason"]
            if client == "litellm" and reason == "stop" and choice["message"].get("tool_calls"):
                reason = "tool_calls"
            assert f"{field}{reason}" in line["says"], (kind, behaviour, reason, line["says"])


def _terminal_event(server, behaviour: str, line: dict) -> str:
    pairs = sse_pairs(served(server, behaviour, line, RESPONSES_PATH, stream=True))
    return [data["type"] for _, data in pairs if isinstance(data, dict) and "type" in data][-1]


def test_openai_agents_raises_where_the_body_says_incomplete_but_streams_only_where_the_stream_ends_so(seen, server):
    """Runner.run reads the response's status, Runner.run_streamed the stream's terminal event: on a
    server whose cut body says incomplete but whose stream ends response.completed (vLLM's, aimock's)
    the first raises and the second hands over the cut text, and runs a cut call whose arguments parse."""
    run = outcomes(seen, "openai-agents", "`Runner.run`, Responses model", CUT, servers())
    streamed = outcomes(seen, "openai-agents", "`Runner.run_streamed`, Responses model", CUT, servers())
    parsing = outcomes(seen, "openai-agents", "`Runner.run_streamed`, Responses model", PARSING_CALL, servers())
    apart = set()
    for behaviour in servers():
        incomplete = json.loads(served(server, behaviour, run[behaviour], RESPONSES_PATH))["status"] == "incomplete"
        ends_incomplete = _terminal_event(server, behaviour, streamed[behaviour]) == "response.incomplete"
        assert run[behaviour]["says"].startswith("raises ModelBehaviorError") == incomplete, behaviour
        assert streamed[behaviour]["says"].startswith("raises ModelBehaviorError") == ends_incomplete, behaviour
        assert (parsing[behaviour]["tool"] == "ran 1×") == (not ends_incomplete), behaviour
        if incomplete and not ends_incomplete:
            apart.add(behaviour)
    assert {"vllm", "aimock"} <= apart  # as found trying it by hand


def test_pydantic_ai_reports_the_finish_reason_the_reply_gives_and_none_for_a_bare_incomplete(seen, server):
    """pydantic-ai's Responses model reads incomplete_details' reason ("length"), else the status:
    "completed" is "stop", and an incomplete status with no reason (aimock's) is None."""
    nones = set()
    for behaviour, line in outcomes(seen, "pydantic-ai", "`run`, Responses model", CUT, servers()).items():
        body = json.loads(served(server, behaviour, line, RESPONSES_PATH))
        if (body.get("incomplete_details") or {}).get("reason") == "max_output_tokens":
            expected = "length"
        else:
            expected = "stop" if body.get("status") == "completed" else "None"
        assert line["says"].endswith(f"`finish_reason` {expected}"), (behaviour, body.get("status"), line["says"])
        if expected == "None":
            nones.add(behaviour)
    assert "aimock" in nones  # as found trying it by hand


def test_the_sweep_picture_and_its_words_match_a_fresh_run(sweep):
    """MOCKLLAMA_WRITE=1 writes them instead, as `python tests/support/python_client_sweep.py --write` does."""
    swept, recordings, table = sweep
    picture, said = python_client_sweep.render(table, recordings, python_client_sweep.versions(swept))
    if os.environ.get("MOCKLLAMA_WRITE") == "1":
        python_client_sweep.write(picture, said)
    assert python_client_sweep.PICTURE.read_text() == picture, f"run: {python_client_sweep.WRITE}"
    shown = python_client_sweep.matrix.table_in(PAGE.read_text(), python_client_sweep.BEGIN, python_client_sweep.END)
    assert shown == said, f"run: {python_client_sweep.WRITE}"


def test_every_client_that_takes_a_cut_call_runs_at_every_position_in_both_behaviours(sweep):
    swept, recordings, table = sweep
    assert len(table) > 20
    for row in table:
        for behaviour in python_client_sweep.BEHAVIOURS:
            assert [line["position"] for line in row.lines[behaviour]] == sorted(recordings), (row.label, behaviour)


def test_the_sweep_at_the_matrix_limits_classifies_as_the_matrix_cut_calls(seen, sweep):
    """tool-cut-20 and tool-cut-30 are the sweep's request at 20 and 30 recorded alone: the one
    declaration of outcome classes judges the matrix's line and the sweep's cell the same."""
    _, recordings, table = sweep
    scenarios = load_scenarios([bundled_cassette_dir()])
    for kind, scenario in ((CUT_CALL, "tool-cut-20"), (PARSING_CALL, "tool-cut-30")):
        limit = scenarios[scenario].limit or 0
        assert recorded(scenarios[scenario]) == recordings[limit]
        for row in table:
            for behaviour in python_client_sweep.BEHAVIOURS:
                line = seen[(row.client, row.call, kind, behaviour)]
                expected = classify(line, recorded(scenarios[scenario]))
                assert row.outcomes[behaviour][limit - 1] is expected, (row.label, kind, behaviour)
