"""`mockllama explain` and the teaching page, the latter in a real headless Chromium."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import mockllama
from mockllama.behaviours.registry import BEHAVIOURS
from mockllama.behaviours.variants import REPLIES, VARIANTS
from mockllama.teaching import explain
from support.browserkit import chromium, headless
from support.httpkit import call
from support.recordings import catalogued_names

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
WEB = Path(mockllama.__file__).resolve().parent / "teaching" / "web"


def _explain(*args):
    return subprocess.run([*MOCKLLAMA, "explain", *args], capture_output=True, text=True, timeout=60)


def test_explain_shows_both_statuses_and_the_twin(server):
    result = _explain("text-cut-8")
    assert result.returncode == 0
    out = result.stdout
    assert "chat twin finish_reason: 'length' (the reply was cut off)" in out
    status = next(line for line in out.splitlines() if line.startswith("status "))
    assert status.split() == ["status", '"completed"', '"incomplete"', '"incomplete"']
    assert '"input": ' not in out and 'input: "Count from 1 to 200, separated by spaces."' in out
    assert "response.completed (status=completed)" in out and "response.incomplete (status=incomplete)" in out
    assert "client:" in out
    assert "js:      The AI SDK's finishReason says 'stop' on llama-server" in out


def test_explain_lists_each_other_server_s_variant_with_its_citation():
    out = _explain("text-cut-8").stdout
    listed = out[out.index("other servers' variants") : out.index("client:")]
    for variant in VARIANTS:
        if variant.name in REPLIES:  # stock llama-server's is buggy, a column of its own
            assert f"  {variant.name} " in listed and f"{variant.server}: {variant.citation}" in listed
    assert 'vllm        body "incomplete", stream response.completed (status=incomplete)' in listed
    assert "inspect-ai  body null, stream response.completed (status=completed)" in listed


def test_explain_fits_80_columns_without_colour_when_piped():
    out = _explain().stdout
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "\x1b[" not in out
    assert len(re.findall(r"^== ", out, re.M)) == len(catalogued_names())


def test_explain_pins_the_lessons_of_the_two_tricky_scenarios():
    assert "false positive" in _explain("text-exact-limit").stdout
    assert "parse as JSON, yet the call was cut" in " ".join(_explain("tool-cut-30").stdout.split())


def test_explain_unknown_scenario_fails_clearly():
    result = _explain("no-such-scenario")
    assert result.returncode == 2
    assert "no scenario named 'no-such-scenario'" in result.stderr and "text-cut-8" in result.stderr


def test_page_and_its_data_are_served(server):
    status, headers, body = call(server.url, "GET", "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b"/_mockllama/static/app.js" in body
    status, _, body = call(server.url, "GET", "/_mockllama/scenarios.json")
    stories = json.loads(body)
    assert stories[0]["name"] == "text-cut-8"
    rows = {row["field"]: row for row in stories[0]["rows"]}
    shown = {behaviour: rows["status"]["values"][behaviour] for behaviour in ("buggy", "fixed", "spec")}
    assert shown == {"buggy": '"completed"', "fixed": '"incomplete"', "spec": '"incomplete"'}
    # a column for each but the other servers' variants, listed apart with their citations
    assert list(rows["status"]["values"]) == [b for b in BEHAVIOURS if b not in REPLIES] == explain.shown_behaviours()
    variants = {v["name"]: v for v in stories[0]["variants"]}
    assert sorted(variants) == sorted(REPLIES)
    assert variants["ollama"]["citation"] == "ollama/ollama PR 17239, open"
    assert variants["ollama"]["status"] == '"completed"' and variants["vllm"]["status"] == '"incomplete"'
    assert rows["status"]["differs"] and not rows["usage.output_tokens"]["differs"]


def test_static_files_cannot_reach_outside_the_web_directory(server):
    status, _, body = call(server.url, "GET", "/_mockllama/static/../server.py")
    assert status == 404 and b"def create_app" not in body
    status, _, body = call(server.url, "GET", "/_mockllama/static/%2e%2e/server.py")
    assert status == 404 and b"def create_app" not in body


def test_page_needs_no_network():
    for path in WEB.iterdir():
        text = path.read_text()
        assert not re.search(r"(src|href)=\"https?://", text), path.name
        assert "//cdn" not in text and "@import" not in text, path.name


def test_page_renders_in_headless_chromium(server_with_sweeps, tmp_path):
    server = server_with_sweeps  # as `serve` serves them: a sweep is one entry
    browser = chromium()
    dom = headless(browser, tmp_path / "profile-dom", "--dump-dom", server.url + "/").stdout
    assert f'data-rendered="{len(catalogued_names())}"' in dom, dom[-2000:]
    listed = re.findall(r'<li><a href="#scenario-([a-z0-9-]+)">', dom)
    assert sorted(listed) == sorted(catalogued_names()) and listed[0] == "text-cut-8"
    section = dom[dom.index('id="scenario-text-cut-8"') : dom.index('id="scenario-text-exact-limit"')]
    assert '<td class="diff fixed">"incomplete"</td>' in section
    assert '<td class="diff buggy">"completed"</td>' in section
    assert "<p class=\"advice javascript\"><b>In JavaScript: </b>The AI SDK's finishReason says 'stop'" in section
    assert re.search(
        r'<pre class="body fixed"[^>]*>.*<span class="changed">\s*"status": "incomplete",</span>', section, re.S
    )
    assert "mockllama check " + server.url + "/buggy" in dom
    assert '<code>/vllm/v1</code> vLLM: body status <code>"incomplete"</code>' in section
    screenshot = tmp_path / "teaching-page.png"
    result = headless(
        browser, tmp_path / "profile-shot", "--window-size=1400,1800", f"--screenshot={screenshot}", server.url + "/"
    )
    assert screenshot.is_file() and screenshot.stat().st_size > 20_000, result.stderr[-2000:]


def test_page_routes_answer_a_wrong_method_with_a_405(server):
    for path in ("/", "/_mockllama/scenarios.json", "/_mockllama/static/app.js"):
        status, headers, body = call(server.url, "POST", path, b"{}")
        assert status == 405, path
        assert json.loads(body)["error"]["type"] == "invalid_request_error"


# --- the journal, for a person demoing: explain --journal and the page's "What clients sent" -----


def _ask_for_the_demo(url: str) -> None:
    from support.httpkit import post_json

    post_json(
        url,
        "/fixed/v1/responses",
        {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0},
    )
    post_json(url, "/v1/responses", {"model": "nothing-matches", "input": "demo"})


def test_explain_journal_shows_what_the_client_sent(start_server):
    server = start_server()
    _ask_for_the_demo(server.url)
    result = _explain("--journal", server.url)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert re.match(r"#1 +\d\d:\d\d:\d\d  POST /fixed/v1/responses -> 200  fixed  text-cut-8 \(match\)", lines[0])
    assert lines[1].strip() == "body, finished, " + lines[1].split(", ")[-1] and "bytes" in lines[1]
    assert lines[2].startswith('      sent: {"model": "x", "input": "Count from 1 to 200')
    assert re.match(r"#2 +\S+  POST /v1/responses -> 404  buggy  no scenario", lines[3])
    assert lines[5].startswith("      error: mockllama: no recording matches")
    assert _explain("--journal", server.url, "--last", "1").stdout.splitlines()[0].startswith("#2 ")


def test_explain_journal_says_when_nothing_answers():
    result = _explain("--journal", "http://127.0.0.1:9")
    assert result.returncode == 2 and "cannot read the journal of http://127.0.0.1:9" in result.stderr


def test_page_shows_the_journal(start_server, tmp_path):
    browser = chromium()
    server = start_server()
    _ask_for_the_demo(server.url)
    dom = headless(browser, tmp_path / "profile-journal", "--dump-dom", server.url + "/").stdout
    rows = re.findall(r'<tr class="(error)?" data-id="(\d+)">(.*?)</tr>', dom, re.S)
    assert [row[1] for row in rows] == ["2", "1"]  # newest first
    assert rows[0][0] == "error" and "nothing-matches" in rows[0][2] and "404" in rows[0][2]
    assert "POST /fixed/v1/responses" in rows[1][2] and "text-cut-8 (match)" in rows[1][2]
    assert "&quot;max_output_tokens&quot;:8" in rows[1][2] or '"max_output_tokens":8' in rows[1][2]


def test_explain_shows_a_thinking_cut_completed_with_an_empty_output_text():
    out = _explain("thinking-cut-12").stdout
    status = next(line for line in out.splitlines() if line.startswith("status "))
    assert status.split() == ["status", '"completed"', '"incomplete"', '"incomplete"']
    assert next(line for line in out.splitlines() if line.startswith("output_text ")).split() == [
        "output_text",
        '""',
        '""',
        '""',
    ]
    assert "output[0].reasoning" in out and "output[0].status" in out
    assert "still thinking at the cut" in " ".join(out.split())


def test_page_data_carries_the_thinking_cut(server):
    stories = {story["name"]: story for story in json.loads(call(server.url, "GET", "/_mockllama/scenarios.json")[2])}
    rows = {row["field"]: row for row in stories["thinking-cut-12"]["rows"]}
    assert rows["output_text"]["values"]["buggy"] == '""' and rows["status"]["differs"]
    assert "still thinking" in stories["thinking-cut-12"]["advice"]
