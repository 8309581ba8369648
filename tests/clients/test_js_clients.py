"""JavaScript clients, run unmodified through node: openai-node and the AI SDK against `mockllama serve`.

The clients are pinned in tests/js/package.json and its lockfile; `npm ci --prefix tests/js`
installs them (scripts/test does). Without them these tests fail, never skip. The scripts they run:

- tests/js/matrix.mjs: the client matrix of docs/typescript.md, every call on every server `mockllama serve`
  serves (llama-server's own behaviours and each other server's variant), compared byte for byte;
- tests/js/clients.mjs: each client's own request for the seed prompt, and what mockllama chose;
- tests/js/example.test.ts and sweep.test.ts (vitest), truncation-safe-client.ts: the page's examples, as written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mockllama.pytest_plugin.session import variant_url_behaviours
from mockllama.teaching import explain, matrix
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from support import ROOT
from support.httpkit import chosen_reply
from support.recordings import SWEEP_POSITIONS

JS = ROOT / "tests" / "js"
PAGE = ROOT / "docs" / "typescript.md"
BEGIN, END = "<!-- js-matrix:begin -->", "<!-- js-matrix:end -->"
INCLUDE = re.compile(r"<!-- include: (\S+) -->\n```\w*\n(.*?)```\n", re.DOTALL)
BEHAVIOURS = ("buggy", "fixed", "spec")
CUT_TEXT = "1. 1\n2. "  # text-cut-8's recorded reply
WRITE = "run: mockllama serve --port 0, then node tests/js/matrix.mjs URL --write docs/typescript.md"


def _require_the_js_clients() -> None:
    if shutil.which("node") is None:
        pytest.fail("node is not installed: apt-get install nodejs npm", pytrace=False)
    if not (JS / "node_modules" / ".package-lock.json").is_file():
        pytest.fail("tests/js/node_modules is missing: run npm ci --prefix tests/js; scripts/test does", pytrace=False)


def _env() -> dict[str, str]:
    """This Python's scripts first on PATH, so `mockllama` in a JS setup is the one under test."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _node(*args: str, timeout: float = 120) -> str:
    result = subprocess.run(["node", *args], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"node {' '.join(args)} failed:\n{result.stderr[-4000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def mockllama_url(tmp_path_factory):
    """`mockllama serve --port 0`, started as a JavaScript test setup starts it: the URL is its first line."""
    _require_the_js_clients()
    log = (tmp_path_factory.mktemp("serve") / "stderr").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "mockllama", "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=log, text=True
    )
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"serve's first line is {url!r}"
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
        log.close()


# --- the matrix --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def measured(mockllama_url):
    """The matrix as made: ``behaviours`` (every server it ran on), ``rows`` (one per call, case and
    behaviour) and ``markdown`` (the page's part)."""
    return json.loads(_node("tests/js/matrix.mjs", mockllama_url, "--json"))


@pytest.fixture(scope="module")
def rows(measured):
    """(client call, scenario, behaviour) -> the row's cells."""
    return {(row["call"], row["scenario"], row["behaviour"]): row for row in measured["rows"]}


def served(server, behaviour: str, scenario, path: str) -> dict:
    """The non-streamed reply ``behaviour`` sends for ``scenario``'s recorded request on ``path``."""
    return json.loads(chosen_reply(server.url, behaviour, scenario, path))


def _row(rows, call: str, scenario: str, behaviour: str) -> dict:
    matches = [
        row
        for (name, case, chosen), row in rows.items()
        if name.startswith(call) and case == scenario and chosen == behaviour
    ]
    assert len(matches) == 1, (call, scenario, behaviour)
    return {cell: matches[0].get(cell) for cell in ("reports", "details", "text", "tool")}  # null: left out


def test_the_page_matrix_matches_a_fresh_run(measured):
    assert matrix.table_in(PAGE.read_text(), BEGIN, END) == measured["markdown"], WRITE


def test_the_matrix_names_the_pinned_versions(measured):
    pinned = json.loads((JS / "package.json").read_text())["dependencies"]
    for name in ("openai", "ai", "@ai-sdk/openai"):
        assert f"{name} {pinned[name]}" in measured["markdown"].splitlines()[0]


def test_every_call_meets_every_case_on_every_server_mockllama_serves(measured, rows):
    """The servers are read from the running server's page data: every behaviour and variant."""
    assert sorted(measured["behaviours"]) == sorted(variant_url_behaviours())
    calls = {call for call, _, _ in rows}
    cases = {case for _, case, _ in rows}
    assert len(calls) == 7 and len(cases) == 5
    assert set(rows) == {(c, case, b) for c in calls for case in cases for b in measured["behaviours"]}
    assert len(measured["rows"]) == len(rows)


def test_the_page_shows_each_client_against_each_server(measured):
    """A table per client, a row per server; then which servers fool each call, from the rows."""
    markdown = measured["markdown"]
    for client, calls in (("openai-node", 4), ("AI SDK", 3)):
        part = markdown.split(f"### {client}\n", 1)[1].split("\n### ", 1)[0]
        servers = [line.split(" | ")[0].removeprefix("| ") for line in part.splitlines()[3:] if line.startswith("| ")]
        assert servers == measured["behaviours"], client
        assert len(re.findall(r"^- .*: fooled by ", part, re.MULTILINE)) == calls, client


@pytest.mark.parametrize("scenario", ["text-cut-8", "thinking-cut-12"])
def test_the_ai_sdk_takes_a_cut_reply_for_a_finished_one_only_on_llama_server(rows, scenario):
    buggy, fixed, spec = (_row(rows, "AI SDK `generateText`, `openai.responses()`", scenario, b) for b in BEHAVIOURS)
    assert (buggy["reports"], buggy["details"]) == ("stop", "-")
    assert (fixed["reports"], fixed["details"]) == (spec["reports"], spec["details"]) == ("length", "max_output_tokens")


def test_the_ai_sdk_runs_a_cut_tool_call_whose_arguments_parse_only_on_llama_server(rows):
    call = "AI SDK `generateText`, `openai.responses()`"
    assert _row(rows, call, "tool-cut-30", "buggy") == {
        "reports": "tool-calls",
        "details": "-",
        "text": '""',
        "tool": "tool ran 1×",
    }
    for behaviour in ("fixed", "spec"):
        assert _row(rows, call, "tool-cut-30", behaviour)["tool"] == "tool call, not run"
    for behaviour in BEHAVIOURS:  # arguments that do not parse never reach the tool
        assert _row(rows, call, "tool-cut-20", behaviour)["tool"] == "tool not run: AI_InvalidToolInputError"
    assert _row(rows, call, "tool-cut-20", "buggy")["reports"] == "tool-calls"


def test_openai_node_status_says_incomplete_except_on_llama_server(rows):
    for scenario in ("text-cut-8", "tool-cut-20", "tool-cut-30", "thinking-cut-12"):
        for behaviour in BEHAVIOURS:
            row = _row(rows, "openai-node `responses.create`", scenario, behaviour)
            cut = behaviour != "buggy"
            assert (row["reports"], row["details"]) == (
                ("incomplete", "max_output_tokens") if cut else ("completed", "null")
            ), (scenario, behaviour)
            last = _row(rows, "openai-node `responses.create({stream: true})`", scenario, behaviour)
            assert last["reports"] == ("response.incomplete (incomplete)" if cut else "response.completed (completed)")
    for behaviour in BEHAVIOURS:
        assert _row(rows, "openai-node `responses.create`", "text-finishes", behaviour)["reports"] == "completed"


def test_llama_server_streams_defeat_streamtext_and_the_stream_helper_in_buggy_and_fixed(rows):
    for scenario in ("text-cut-8", "tool-cut-20", "text-finishes", "thinking-cut-12"):
        for behaviour in ("buggy", "fixed"):
            streamed = _row(rows, "AI SDK `streamText`", scenario, behaviour)
            assert (streamed["reports"], streamed["text"]) == ("error", '""')
            assert (
                "AI_TypeValidationError" in streamed["tool"]
                and "no output_index on output_item.added" in streamed["tool"]
            )
            helper = _row(rows, "openai-node `responses.stream()`", scenario, behaviour)
            assert helper["tool"] == "threw OpenAIError: rsp.output is not iterable"
        assert _row(rows, "AI SDK `streamText`", scenario, "spec")["reports"] in ("length", "stop")
        assert _row(rows, "openai-node `responses.stream()`", scenario, "spec")["reports"] in (
            "incomplete",
            "completed",
        )


def test_the_chat_endpoint_says_length_in_every_behaviour(rows):
    for behaviour in BEHAVIOURS:
        assert _row(rows, "AI SDK `generateText`, `openai.chat()`", "text-cut-8", behaviour)["reports"] == "length"
        assert (
            _row(rows, "openai-node `chat.completions.create`", "text-cut-8", behaviour)["reports"]
            == "finish_reason length"
        )


CUT_CASES = ("text-cut-8", "tool-cut-20", "tool-cut-30", "thinking-cut-12")


def test_openai_node_reports_the_status_and_finish_reason_each_server_sends(rows, measured, server, scenarios):
    """On every server, as its reply on the wire says: the thin SDK hands both over as sent."""
    for behaviour in measured["behaviours"]:
        for case in CUT_CASES:
            body = served(server, behaviour, scenarios[case], RESPONSES_PATH)
            row = _row(rows, "openai-node `responses.create`", case, behaviour)
            assert row["reports"] == body.get("status"), (case, behaviour)
            chat = served(server, behaviour, scenarios[case], CHAT_PATH)["choices"][0]["finish_reason"]
            assert _row(rows, "openai-node `chat.completions.create`", case, behaviour)["reports"] == (
                f"finish_reason {chat}"
            ), (case, behaviour)


def test_the_ai_sdk_runs_a_cut_call_whose_arguments_parse_where_the_server_gives_no_incomplete_details(
    rows, measured, server, scenarios
):
    """generateText reads a Responses reply's end from incomplete_details alone: where a server leaves
    it out or null, a cut reply is "stop" or "tool-calls", and a cut call whose arguments parse runs."""
    call = "AI SDK `generateText`, `openai.responses()`"
    running = set()
    for behaviour in measured["behaviours"]:
        body = served(server, behaviour, scenarios["tool-cut-30"], RESPONSES_PATH)
        row = _row(rows, call, "tool-cut-30", behaviour)
        assert (row["tool"] == "tool ran 1×") == (not body.get("incomplete_details")), behaviour
        assert (_row(rows, call, "text-cut-8", behaviour)["reports"] == "stop") == (
            not served(server, behaviour, scenarios["text-cut-8"], RESPONSES_PATH).get("incomplete_details")
        ), behaviour
        if row["tool"] == "tool ran 1×":
            running.add(behaviour)
    assert {"buggy", "ollama", "localai", "sglang", "aimock"} <= running  # as found trying it by hand
    assert not running & {"fixed", "spec"}


def test_a_chat_client_runs_a_cut_call_where_the_server_says_tool_calls_or_stop(rows, measured, server, scenarios):
    """The AI SDK runs tools on "stop" or "tool-calls": a chat endpoint that says either of a cut call
    gets it run."""
    for behaviour in measured["behaviours"]:
        chat = served(server, behaviour, scenarios["tool-cut-30"], CHAT_PATH)["choices"][0]["finish_reason"]
        row = _row(rows, "AI SDK `generateText`, `openai.chat()`", "tool-cut-30", behaviour)
        assert (row["tool"] == "tool ran 1×") == (chat in ("stop", "tool_calls")), (behaviour, chat)


def test_explain_tells_a_javascript_user_what_the_matrix_shows(rows, scenarios):
    """explain's and the teaching page's JavaScript advice quotes the AI SDK's finishReason as measured."""
    for scenario in ("text-cut-8", "tool-cut-20", "tool-cut-30", "text-finishes", "thinking-cut-12"):
        advice = explain.story(scenarios[scenario])["javascript_advice"]
        buggy, fixed = (
            _row(rows, "AI SDK `generateText`, `openai.responses()`", scenario, b) for b in ("buggy", "fixed")
        )
        assert f"'{buggy['reports']}'" in advice and f"'{fixed['reports']}'" in advice, scenario
        ran = buggy["tool"].startswith("tool ran")
        assert ("generateText runs every call whose arguments parse" in advice) == ran, scenario


# --- the sweep view ----------------------------------------------------------------------------

SWEEP = "tool-call"
SWEEP_BEGIN, SWEEP_END = "<!-- js-sweep:begin -->", "<!-- js-sweep:end -->"
WRITE_SWEEP = "run: mockllama serve --port 0, then node tests/js/sweep.mjs URL --write docs/typescript.md"
GENERATE_TEXT = "AI SDK `generateText`, `openai.responses()`"


@pytest.fixture(scope="module")
def sweep_view(mockllama_url):
    """Every client call of the matrix at every position of the tool-call sweep, in one node process."""
    return json.loads(_node("tests/js/sweep.mjs", mockllama_url, timeout=300))


def _sweep_positions() -> dict[int, dict]:
    """Each position of the tool-call sweep, from the recordings: its recorded /v1/responses body."""
    found = {}
    for scenario in SWEEP_POSITIONS.values():
        if scenario.sweep == SWEEP:
            found[scenario.limit] = scenario.find("POST", RESPONSES_PATH, False).body_json
    return dict(sorted(found.items()))


def _arguments_parse(body: dict) -> bool:
    """Whether the recorded reply holds a function_call whose arguments parse as JSON."""
    for item in body["output"]:
        if item["type"] == "function_call":
            try:
                json.loads(item["arguments"])
                return True
            except ValueError:
                return False
    return False


def _cells(view: dict, call: str, behaviour: str) -> dict[int, str]:
    return dict(zip(view["positions"], view["cells"][call][behaviour], strict=True))


def test_the_page_sweep_view_and_its_picture_match_a_fresh_run(sweep_view):
    assert matrix.table_in(PAGE.read_text(), SWEEP_BEGIN, SWEEP_END) == sweep_view["markdown"], WRITE_SWEEP
    assert (PAGE.parent / sweep_view["picture"]).read_text() == sweep_view["svg"], WRITE_SWEEP


def test_the_sweep_view_has_every_matrix_client_at_every_recorded_position(sweep_view, rows):
    assert sweep_view["positions"] == list(_sweep_positions())
    assert sweep_view["last"] == max(_sweep_positions())
    assert list(sweep_view["cells"]) == list(dict.fromkeys(call for call, _, _ in rows))
    names = {outcome["name"] for outcome in sweep_view["outcomes"]}
    for by_behaviour in sweep_view["cells"].values():
        assert list(by_behaviour) == ["buggy", "fixed"]
        for cells in by_behaviour.values():
            assert len(cells) == len(sweep_view["positions"]) and set(cells) <= names


def test_the_sweep_picture_shows_each_cell_with_a_title_labels_and_a_legend(sweep_view):
    """Each run of one outcome along a row is a rect whose <title> names it; together they are the cells."""
    svg = sweep_view["svg"]
    assert svg.startswith("<svg ") and "<title>What each JavaScript client does" in svg
    label = {outcome["name"]: outcome["label"] for outcome in sweep_view["outcomes"]}
    drawn: dict[tuple[str, str], dict[int, str]] = {}
    pattern = rf"<rect [^>]*><title>([^<]+), {SWEEP}@(\d+)(?:-(\d+))?, (buggy|fixed): ([^<]+)</title></rect>"
    for client, first, last, behaviour, outcome in re.findall(pattern, svg):
        row = drawn.setdefault((client, behaviour), {})
        for position in range(int(first), int(last or first) + 1):
            assert position not in row, (client, behaviour, position)
            row[position] = outcome
    for call, by_behaviour in sweep_view["cells"].items():
        assert f">{call.replace('`', '')}</text>" in svg
        for behaviour in by_behaviour:
            shown = {position: label[did] for position, did in _cells(sweep_view, call, behaviour).items()}
            assert drawn[(call.replace("`", ""), behaviour)] == shown, (call, behaviour)
    for outcome in sweep_view["outcomes"]:
        assert f">{outcome['label']}</text>" in svg
    for position in sweep_view["positions"]:
        assert f">{position}</text>" in svg


def test_the_ai_sdk_runs_a_cut_call_exactly_where_its_arguments_parse_only_on_llama_server(sweep_view):
    """The hold-out fact, from the harness: generateText runs every cut call whose recorded arguments parse
    on buggy, and on fixed only the finished one; where they do not parse it refuses the call."""
    positions = _sweep_positions()
    last = max(positions)
    parse = {position for position, body in positions.items() if _arguments_parse(body)}
    assert parse - {last}, "the sweep has cut positions whose arguments parse"
    buggy, fixed = (_cells(sweep_view, GENERATE_TEXT, behaviour) for behaviour in ("buggy", "fixed"))
    assert {position for position, did in buggy.items() if did == "ran"} == parse
    assert {position for position, did in fixed.items() if did == "ran"} == {last}
    calls = {
        position for position, body in positions.items() if any(i["type"] == "function_call" for i in body["output"])
    }
    assert {position for position, did in buggy.items() if did == "refused"} == calls - parse


def test_openai_node_never_notices_a_cut_on_llama_server_and_always_on_a_correct_server(sweep_view):
    last = sweep_view["last"]
    for call in ("openai-node `responses.create`", "openai-node `responses.create({stream: true})`, iterated"):
        buggy, fixed = (_cells(sweep_view, call, behaviour) for behaviour in ("buggy", "fixed"))
        assert "noticed" not in buggy.values()
        assert {position for position, did in fixed.items() if did == "noticed"} == set(range(1, last))
    for behaviour in ("buggy", "fixed"):  # the chat endpoint says length in every behaviour
        chat = _cells(sweep_view, "openai-node `chat.completions.create`", behaviour)
        assert {position for position, did in chat.items() if did == "noticed"} == set(range(1, last))


def test_the_streaming_helpers_fail_at_every_position_in_buggy_and_fixed(sweep_view):
    for call in ("AI SDK `streamText`, `openai.responses()`", "openai-node `responses.stream()`, `finalResponse()`"):
        for behaviour in ("buggy", "fixed"):
            assert set(sweep_view["cells"][call][behaviour]) == {"threw"}, (call, behaviour)


# --- the clients' own requests ------------------------------------------------------------------

CLIENTS = (
    "openai-node responses.create, string input",
    "openai-node responses.create, message list",
    "openai-node responses.create, input_text parts",
    "openai-node responses.create, stream: true",
    "openai-node responses.stream(), finalResponse()",
    "openai-node chat.completions.create, max_completion_tokens",
    "openai-node chat.completions.create, max_tokens, stream: true",
    "AI SDK generateText, openai.responses()",
    "AI SDK streamText, openai.responses()",
    "AI SDK generateText, openai.chat()",
    "AI SDK streamText, openai.chat()",
)
LOOP = "AI SDK tool loop, X-Mockllama-Scenario: tool-conversation"
UNSELECTED_LOOP = "AI SDK tool loop, unselected"


@pytest.fixture(scope="module")
def observed(mockllama_url):
    lines = [json.loads(line) for line in _node("tests/js/clients.mjs", mockllama_url).splitlines()]
    return {(line["client"], line["behaviour"]): line for line in lines}


def test_every_client_is_observed(observed):
    assert sorted(observed) == sorted((c, b) for c in (*CLIENTS, LOOP, UNSELECTED_LOOP) for b in BEHAVIOURS)


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
@pytest.mark.parametrize("client", CLIENTS)
def test_an_unmodified_client_reaches_text_cut_8_by_matching(observed, client, behaviour):
    line = observed[(client, behaviour)]
    assert [(r["status"], r["scenario"], r["selectedBy"]) for r in line["served"]] == [(200, "text-cut-8", "match")], (
        line
    )
    reports = line["reports"]
    if "text" in reports:
        assert reports["text"] == CUT_TEXT
    if "status" in reports:  # a Responses status: only llama-server's says completed
        assert reports["status"] == ("completed" if behaviour == "buggy" else "incomplete")


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_an_ai_sdk_tool_loop_ends_within_the_recorded_turns_running_the_tool_once(observed, scenarios, behaviour):
    line = observed[(LOOP, behaviour)]
    assert [(r["status"], r["scenario"], r["turn"]) for r in line["served"]] == [
        (200, "tool-conversation", "1"),
        (200, "tool-conversation", "2"),
    ]
    final = scenarios["tool-conversation"].find("POST", RESPONSES_PATH, False, 2).body_json
    assert line["reports"] == {"finishReason": "stop", "steps": 2, "runs": 1, "text": explain.output_text(final)}


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_unselected_the_ai_sdk_loop_matches_both_turns_by_prompt(observed, scenarios, behaviour):
    """The AI SDK sends tool_choice "auto" when none is asked for; the recorded turn 2 sends none.
    llama-server's default is "auto", and the live tier proves both generate the same
    (tests/support/equivalences.py), so the loop matches its way through the conversation with no selection."""
    line = observed[(UNSELECTED_LOOP, behaviour)]
    assert [(r["status"], r["scenario"], r["selectedBy"], r["turn"]) for r in line["served"]] == [
        (200, "tool-conversation", "match", "1"),
        (200, "tool-conversation", "conversation", "2"),
    ]
    final = scenarios["tool-conversation"].find("POST", RESPONSES_PATH, False, 2).body_json
    assert line["reports"] == {"finishReason": "stop", "steps": 2, "runs": 1, "text": explain.output_text(final)}


# --- the page's examples, as written ------------------------------------------------------------


def test_the_page_shows_each_included_file_as_it_is():
    _require_the_js_clients()
    included = INCLUDE.findall(PAGE.read_text())
    assert {path for path, _ in included} == {
        "tests/js/mockllama.setup.ts",
        "tests/js/vitest.config.ts",
        "tests/js/example.test.ts",
        "tests/js/sweep.test.ts",
        "tests/js/truncation-safe-client.ts",
    }
    for path, shown in included:
        assert shown == (ROOT / path).read_text(), f"docs/typescript.md shows an old {path}: {WRITE}"


def test_the_vitest_examples_run_as_written_one_test_a_sweep_position_and_behaviour():
    """example.test.ts's tests (15, and two for each server variant_url runs through), and sweep.test.ts's one
    a position of the tool-call sweep, in buggy and fixed."""
    _require_the_js_clients()
    positions = sum(1 for scenario in SWEEP_POSITIONS.values() if scenario.sweep == "tool-call")
    expected = 15 + 2 * len(variant_url_behaviours()) + 2 * positions
    result = subprocess.run(
        ["node", "node_modules/vitest/vitest.mjs", "run", "--reporter=verbose"],
        cwd=JS,
        env={**_env(), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert re.search(rf"Tests +{expected} passed \({expected}\)", result.stdout), result.stdout[-2000:]
    assert re.search(r"^ *✓ sweep\.test\.ts > tool-call@17-fixed( \d+ms)?$", result.stdout, re.MULTILINE), result.stdout


def test_the_vitest_example_runs_through_every_server_the_variant_fixture_does():
    """example.test.ts's SERVERS is the list mockllama_variant_url runs a Python test through."""
    servers = re.search(r"const SERVERS = \[(.*?)\];", (JS / "example.test.ts").read_text()).group(1)
    assert re.findall(r'"([^"]+)"', servers) == variant_url_behaviours()


def test_the_typescript_examples_typecheck():
    _require_the_js_clients()
    result = subprocess.run(
        ["node", "node_modules/typescript/bin/tsc", "--noEmit", "-p", "."],
        cwd=JS,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:]
