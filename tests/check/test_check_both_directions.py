"""`check` honest in both directions (issue 46): the five servers that fooled it, each a test double;
and the usage fallback on the chat endpoint (issue 54): LM Studio's count one short.

A status is only worth checking if it can say both things, a stream has exactly one terminal
event, a null status is a known variant, a wrong reason is a fault found (not a doubt), and where
usage.output_tokens (usage.completion_tokens) stays below the limit the report says the one
fallback signal is gone. Each double in tests/support/doubles/ names the server it stands for.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mockllama.server.background import BackgroundServer
from support.doubles import (
    always_incomplete,
    inspect_ai,
    lmstudio,
    two_terminals,
    undercounted_usage,
    usage_not_an_object,
    wrong_reason,
)

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
INSPECT_AI = (
    "inspect_ai: status null with incomplete_details set, a stream ending with response.completed "
    "(UKGovernmentBEIS/inspect_ai issue 5198, open)"
)
DOUBLES = {
    "always_incomplete": always_incomplete,
    "two_terminals": two_terminals,
    "inspect_ai": inspect_ai,
    "wrong_reason": wrong_reason,
    "undercounted_usage": undercounted_usage,
    "usage_not_an_object": usage_not_an_object,
    "lmstudio": lmstudio,
}


@pytest.fixture(scope="module")
def urls(server):
    running = {name: BackgroundServer(module.create_app(server.url)).start() for name, module in DOUBLES.items()}
    yield {name: double.url for name, double in running.items()}
    for double in running.values():
        double.stop()


def _check(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MOCKLLAMA, "check", url, *args], capture_output=True, text=True, timeout=120)


def _report(url: str, *args: str) -> tuple[int, dict]:
    result = _check(url, *args, "--json")
    report = json.loads(result.stdout)
    assert result.returncode == report["exit_code"], report["summary"]
    return result.returncode, report


# 1. Incomplete to every reply: the request with room to finish must be reported finished.


def test_a_server_that_says_incomplete_to_every_reply_is_dishonest_the_other_way(urls):
    code, report = _report(urls["always_incomplete"], "--probe", "responses")
    assert (code, report["verdict"]) == (1, "dishonest")
    assert {probe["verdict"] for probe in report["probes"]} == {"honest"}  # every cut reply, reported as cut
    finished = [probe["finished"] for probe in report["probes"]]
    assert [(f["scenario"], f["verdict"]) for f in finished] == [
        ("text-finishes", "dishonest"),
        ("tool-finishes", "dishonest"),
        ("text-finishes", "dishonest"),
        ("tool-finishes", "dishonest"),
    ]
    assert report["summary"] == (
        f"{urls['always_incomplete']}: a reply that finished inside its limit is reported as cut by: status, "
        "incomplete_details.reason, item status, terminal event."
    )


def test_the_request_with_room_to_finish_is_the_catalogue_s_and_its_lines_are_printed(urls):
    """tool-finishes, as recorded: 400 tokens of room, and its twin says tool_calls."""
    lines = _check(urls["always_incomplete"], "--probe", "tool").stdout.splitlines()
    assert lines[-7].startswith("/v1/responses max_output_tokens=400: status='incomplete'")
    assert lines[-6] == (
        "/v1/chat/completions max_tokens=400: finish_reason='tool_calls' completion_tokens=37 tool_calls=1 "
        "(arguments parse as JSON)"
    )
    assert lines[-5] == "  dishonest status: 'incomplete' (says a reply that finished inside its limit was cut)"


def test_an_honest_server_reports_the_finished_reply_completed(server):
    code, report = _report(f"{server.url}/fixed", "--probe", "responses")
    assert code == 0
    assert [probe["finished"]["verdict"] for probe in report["probes"]] == ["honest"] * 4
    assert [(a["name"], a["verdict"], a["seen"]) for a in report["probes"][2]["finished"]["aspects"]] == [
        ("status", "honest", "'completed'"),
        ("incomplete_details.reason", "honest", "null"),
        ("items.status", "honest", "every item says 'completed'"),
        ("completed_at", "honest", "absent"),
        ("terminal_event", "honest", "'response.completed'"),
        ("function_call_arguments.done", "not applicable", "no function call"),
    ]


# 2. Two terminal events: never honest; dishonest when one of them says completed.


def test_a_stream_with_two_terminal_events_is_dishonest(urls):
    result = _check(urls["two_terminals"], "--probe", "stream")
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    assert (
        "  dishonest terminal event: 2 terminal events: 'response.completed', then 'response.incomplete' "
        "(a stream has exactly one terminal event; a client that stops at the first takes the reply as finished)"
    ) in lines
    assert lines[-1] == (
        f"{urls['two_terminals']}: a reply cut off at max_output_tokens is reported as finished by: terminal event."
    )


# 3. A null status with incomplete_details set: inspect_ai's variant, exit 1.


def test_a_null_status_is_dishonest_even_with_the_reason_set(urls):
    result = _check(urls["inspect_ai"], "--probe", "text")
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "/v1/responses max_output_tokens=8: status=None incomplete_details={'reason': 'max_output_tokens'}"
    )
    assert "  dishonest status: null (a client that checks status == 'incomplete' takes the reply as finished)" in lines
    assert "  honest    incomplete_details.reason: 'max_output_tokens' (names the limit that cut the reply)" in lines
    assert f"  known variant: {INSPECT_AI}" in lines
    assert lines[-1].endswith(f"Known variant: {INSPECT_AI}.")


def test_inspect_ai_s_stream_says_completed_around_a_reason(urls):
    code, report = _report(urls["inspect_ai"], "--probe", "stream")
    assert code == 1
    verdicts = [{a["name"]: a["verdict"] for a in probe["aspects"]} for probe in report["probes"]]
    assert [(v["status"], v["incomplete_details.reason"], v["terminal_event"]) for v in verdicts] == [
        ("dishonest", "honest", "dishonest")
    ] * 2
    assert [probe["variants"] for probe in report["probes"]] == [[INSPECT_AI]] * 2


# 4. status "incomplete" with reason "length": wrong, and a CI gate fails on it (exit 1).


def test_a_wrong_reason_under_an_honest_status_is_wrong_and_exits_1(urls):
    code, report = _report(urls["wrong_reason"], "--probe", "responses")
    assert (code, report["verdict"]) == (1, "wrong")
    assert report["summary"] == (
        f"{urls['wrong_reason']}: a reply cut off at max_output_tokens is reported wrongly: "
        "incomplete_details.reason ('length': must be 'max_output_tokens', the limit that cut the reply: "
        "a client that checks for it misses the cut)."
    )
    for probe in report["probes"]:
        assert [a["name"] for a in probe["aspects"] if a["verdict"] == "wrong"] == ["incomplete_details.reason"]
        assert probe["finished"]["verdict"] == "honest"


# 5. A cut reply whose usage stays below the limit: the one fallback signal is gone.


def test_usage_below_the_limit_is_reported_as_the_fallback_gone(urls):
    result = _check(urls["undercounted_usage"], "--probe", "text")
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    assert (
        "  gone      usage fallback: output_tokens=7 is below max_output_tokens=8 (the one fallback signal "
        "where the status lies: the usage does not show the cut either)"
    ) in lines
    assert lines[-1].endswith(
        " usage.output_tokens of a cut reply stays below max_output_tokens (text): the one fallback signal a "
        "client has where the status lies is gone."
    )
    code, report = _report(urls["undercounted_usage"], "--probe", "responses")
    assert [probe["usage_fallback"]["verdict"] for probe in report["probes"]] == ["gone"] * 4


def test_usage_that_is_not_an_object_is_a_reply_check_cannot_judge(urls):
    code, report = _report(urls["usage_not_an_object"], "--probe", "responses")
    assert (code, report["verdict"]) == (2, "unknown")
    plain, streamed = "POST /v1/responses", "POST /v1/responses (its last event)"
    said = [f'{where} answered a "usage" that is not an object' for where in (plain, plain, streamed, streamed)]
    assert [probe["reason"] for probe in report["probes"]] == said


def test_usage_at_the_limit_keeps_the_fallback_and_prints_nothing_about_it(server):
    result = _check(f"{server.url}/buggy", "--probe", "responses", "--json")
    report = json.loads(result.stdout)
    assert [probe["usage_fallback"]["verdict"] for probe in report["probes"]] == ["kept"] * 4
    assert report["probes"][0]["usage_fallback"]["seen"] == "output_tokens=8 reaches max_output_tokens=8"
    assert "usage fallback" not in _check(f"{server.url}/buggy", "--probe", "responses").stdout


# 6. On the chat endpoint, a cut reply whose usage.completion_tokens stays below max_tokens (LM
# Studio's): the finish_reason says "length", honestly, and the fallback is gone.

LM_STUDIO = (
    "LM Studio: usage.completion_tokens max_tokens - 1 on a cut reply (lmstudio-ai/lmstudio-bug-tracker issue 2335, "
    "open)"
)


def test_a_chat_usage_one_short_is_the_fallback_gone_beside_an_honest_finish_reason(urls):
    result = _check(urls["lmstudio"], "--probe", "chat-text")
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert lines[:4] == [
        "/v1/chat/completions max_tokens=8: finish_reason='length' completion_tokens=7",
        "  honest    finish_reason: 'length' (the reply was cut at max_tokens)",
        "  gone      usage fallback: completion_tokens=7 is below max_tokens=8 (the one fallback signal where the "
        "finish_reason lies: the usage does not show the cut either)",
        f"  known variant: {LM_STUDIO}",
    ]
    assert lines[-1] == (
        f"{urls['lmstudio']}: a reply cut off at max_tokens is reported as finish_reason 'length'. "
        "usage.completion_tokens of a cut reply stays below max_tokens (chat-text): the one fallback signal a "
        f"client has where the finish_reason lies is gone. Known variant: {LM_STUDIO}."
    )


def test_on_both_endpoints_a_usage_one_short_alone_exits_0(urls):
    """No verdict rests on the usage: both endpoints honest, exit 0, and the chat side still named."""
    code, report = _report(urls["lmstudio"])
    assert (code, report["verdict"]) == (0, "honest")
    chat = report["endpoints"]["/v1/chat/completions"]
    assert (chat["verdict"], chat["variants"]) == ("honest", [LM_STUDIO])
    fallback = [p["usage_fallback"] for p in report["probes"] if p["endpoint"] == "/v1/chat/completions"]
    # a chat stream carries no usage unless asked (stream_options): nothing to judge there
    assert [f and f["verdict"] for f in fallback] == ["gone", "gone", None, None]
