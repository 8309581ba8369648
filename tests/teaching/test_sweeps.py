"""A sweep for a person: `mockllama explain` shows it as one table, the page as one entry to step
through. What the tool-call sweep shows is read from the output and checked against the recordings."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace

from mockllama.behaviours.registry import Behaviour, register, unregister
from mockllama.behaviours.replay import reply_for
from mockllama.behaviours.variants import own_behaviours
from mockllama.teaching.explain import stories
from mockllama.teaching.sweep import render_sweep, sweep_story, sweeps_in
from mockllama.wire.routes import RESPONSES_PATH
from support.browserkit import chromium, headless
from support.httpkit import call
from support.recordings import LOADED, SCENARIOS

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
TOOL_CALL = sweeps_in(LOADED)["tool-call"]


def _explain(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*MOCKLLAMA, "explain", *args], capture_output=True, text=True, timeout=60)


def _table(out: str) -> dict[int, dict[str, str]]:
    """The sweep table's rows by position, each cell cut where its header's column starts."""
    lines = out.splitlines()
    header_at = next(n for n, line in enumerate(lines) if "so far (its end)" in line)
    header = lines[header_at]
    names = header.split()
    names = ["N", "output", "so far", *names[names.index("(its") + 2 :]]
    starts = [0, header.index("output"), header.index("so far"), *(header.index(f" {n}") + 1 for n in names[3:])]
    rows = {}
    for line in lines[header_at + 1 :]:
        if not line.strip():
            break
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None])]
        rows[int(cells[0].lstrip(">"))] = dict(zip(names, cells)) | {"marked": line.startswith(">")}
    return rows


def _runs(rows: dict[int, dict[str, str]], *columns: str) -> list[tuple]:
    """Consecutive positions with the same values in ``columns``: (values..., first, last)."""
    found: list[list] = []
    for limit in sorted(rows):
        values = [rows[limit][c] for c in columns]
        if found and found[-1][:-2] == values:
            found[-1][-1] = limit
        else:
            found.append([*values, limit, limit])
    return [tuple(run) for run in found]


def _recorded(limit: int) -> dict:
    """What llama-server sent at that position: its non-streamed /v1/responses body."""
    position = TOOL_CALL[limit - 1]
    return position.find("POST", RESPONSES_PATH, False).body_json


def test_explain_tool_call_shows_where_the_shape_changes_as_the_issue_found_it():
    result = _explain("tool-call")
    assert result.returncode == 0, result.stderr
    rows = _table(result.stdout)
    assert sorted(rows) == list(range(1, 38))
    # 1-7 the call's markup as a text message; 8-11 a call whose arguments are "{"; 12-29 arguments
    # that grow and do not parse; 30-36 the whole object, which parses though cut; 37 finished.
    assert _runs(rows, "output", "parses") == [
        ("message", "-", 1, 7),
        ("function_call", "no", 8, 29),
        ("function_call", "yes", 30, 37),
    ]
    assert [rows[n]["so far"] for n in (1, 2, 8, 11, 12)] == ['{"', '{"name', "{", "{", '{"']
    assert _runs({n: rows[n] for n in range(8, 12)}, "so far") == [("{", 8, 11)]
    assert len({rows[n]["so far"] for n in range(30, 38)}) == 1 and rows[29]["so far"] != rows[30]["so far"]
    assert _runs(rows, "buggy") == [("completed", 1, 37)]
    assert _runs(rows, "fixed") == _runs(rows, "spec") == [("incomplete", 1, 36), ("completed", 37, 37)]
    out = " ".join(result.stdout.split())
    assert "output message 1-7, function_call 8-37 parses no 8-29, yes 30-37 cut yes 1-36, no 37" in out
    assert "buggy says 'completed' at 1-36, as at 37 (finished). At 30-36 the arguments parse although cut" in out
    assert all(len(line) <= 80 for line in result.stdout.splitlines())


def test_explain_tool_call_reads_each_row_from_the_recording_and_the_behaviours():
    rows = _table(_explain("tool-call").stdout)
    for limit, row in rows.items():
        item = _recorded(limit)["output"][-1]
        value = item["arguments"] if item["type"] == "function_call" else item["content"][0]["text"]
        shown = row["so far"]
        assert value == shown or (shown.startswith("…") and value.endswith(shown[1:])), limit
        assert row["output"] == item["type"]
        position = TOOL_CALL[limit - 1]
        interaction = position.find("POST", RESPONSES_PATH, False)
        for behaviour in ("buggy", "fixed", "spec"):
            assert row[behaviour] == json.loads(reply_for(behaviour, interaction, position).body)["status"]
    whole = json.loads(_recorded(37)["output"][0]["arguments"])
    assert json.loads(_recorded(30)["output"][0]["arguments"]) == whole  # parses, yet cut (the twin says length)
    assert TOOL_CALL[29].stopped_by_limit() and not TOOL_CALL[36].stopped_by_limit()


def test_explain_a_position_shows_its_sweep_with_that_position_marked():
    rows = _table(_explain("tool-call@17").stdout)
    assert [limit for limit, row in rows.items() if row["marked"]] == [17] and len(rows) == 37


def test_explain_lists_each_sweep_once_and_no_position_alone():
    out = _explain().stdout
    titles = re.findall(r"^== (\S+?)(?::| =)", out, re.M)
    sweeps = sweeps_in(LOADED)
    assert sorted(titles) == sorted([*SCENARIOS, *sweeps])  # every recording once, each sweep one block
    assert not any("@" in title for title in titles)
    for name, positions in sweeps.items():
        assert f"== {name}: a sweep, positions {positions[0].limit}-{positions[-1].limit} " in out


def test_a_behaviour_registered_later_gets_its_own_column_read_from_its_reply():
    def always_odd(interaction, scenario):
        reply = reply_for("buggy", interaction, scenario)
        if interaction.path != RESPONSES_PATH or reply.events is not None:
            return reply
        return replace(reply, body=json.dumps({**json.loads(reply.body), "status": "odd"}).encode())

    register(Behaviour("always-odd", "a status no rule here knows", always_odd))
    try:
        told = sweep_story("tool-call", TOOL_CALL)
        assert told["behaviours"] == own_behaviours() and "always-odd" in told["behaviours"]
        assert {row["said"]["always-odd"] for row in told["positions"]} == {"odd"}
        lines = render_sweep(told)
        assert all(len(line) <= 80 for line in lines)  # a fourth column moves to a table of its own
        assert any(line.split()[1:] == ["odd"] for line in lines if line.strip().startswith("37"))
    finally:
        unregister("always-odd")


def test_page_data_has_one_compact_entry_a_sweep(server_with_sweeps):
    told = json.loads(call(server_with_sweeps.url, "GET", "/_mockllama/scenarios.json")[2])
    assert [s["name"] for s in told] == [s["name"] for s in stories(LOADED)]
    assert not any("@" in s["name"] for s in told)
    sweep = next(s for s in told if s["name"] == "tool-call")
    assert sweep["kind"] == "sweep" and (sweep["first"], sweep["last"]) == (1, 37)
    assert sweep["behaviours"] == own_behaviours()
    assert [row["limit"] for row in sweep["positions"]] == list(range(1, 38))
    assert set(sweep["positions"][0]) == {"limit", "name", "cut", "output", "so_far", "parses", "said"}
    at = {row["limit"]: row for row in sweep["positions"]}
    assert at[1]["so_far"] == '{"' and at[1]["output"] == "message" and at[1]["parses"] is None
    assert at[29]["parses"] is False and at[30]["parses"] is True
    assert at[30]["said"] == {"buggy": "completed", "fixed": "incomplete", "spec": "incomplete"}
    assert at[37]["said"] == {"buggy": "completed", "fixed": "completed", "spec": "completed"}
    assert at[30]["cut"] is True and at[37]["cut"] is False
    # per position a row, not a full explanation: no bodies, events or variants
    assert len(json.dumps(sweep)) < 20_000 and "bodies" not in sweep


def test_page_steps_through_a_sweep_in_headless_chromium(server_with_sweeps, tmp_path):
    browser = chromium()
    url = server_with_sweeps.url + "/#scenario-tool-call@30"
    dom = headless(browser, tmp_path / "profile-sweep", "--dump-dom", url).stdout
    section = dom[dom.index('id="scenario-tool-call"') :]
    section = section[: section.index("</section>")]
    assert 'data-position="30"' in dom and '<input type="range" min="0" max="36"' in section
    cells = re.findall(r'<button type="button" class="cell (\w+)( current)?" data-limit="(\d+)"', section)
    kinds = [(kind, int(limit)) for kind, _, limit in cells]
    assert [kind for kind, _ in kinds] == ["text"] * 7 + ["unparsed"] * 22 + ["parses"] * 7 + ["finished"]
    assert [int(limit) for _, current, limit in cells if current] == [30]
    assert '<pre class="so-far" data-limit="30">{"path": "/tmp/hello.txt", "content": "Hello, world!"}</pre>' in section
    assert '<td class="hides" data-behaviour="buggy">completed</td>' in section
    assert '<td class="tells" data-behaviour="fixed">incomplete</td>' in section
    assert '<a href="#scenario-tool-call">tool-call<span class="tag sweep">sweep 1-37</span></a>' in dom
