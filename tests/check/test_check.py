"""`mockllama check`: exit 1 for the bug, 0 for an honest server, 2 when it can't tell; with both
endpoints probed (the default), each endpoint's verdict on its own line, and the worse one's exit code."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from aiohttp import web

from mockllama import check
from mockllama.server.background import BackgroundServer

MOCKLLAMA = [sys.executable, "-m", "mockllama"]


def _check(url, *args):
    return subprocess.run([*MOCKLLAMA, "check", url, *args], capture_output=True, text=True, timeout=120)


STOCK = (
    "Known variant: stock llama-server: 'completed' everywhere, no incomplete_details, no "
    "function_call_arguments.done (ggml-org/llama.cpp issue 30773)."
)


@pytest.mark.parametrize("probe", ["text", "tool", "stream", "responses"])
def test_buggy_exits_1(server, probe):
    result = _check(f"{server.url}/buggy", "--probe", probe)
    assert result.returncode == 1, result.stdout
    summary = result.stdout.splitlines()[-1]
    assert summary.startswith(
        f"{server.url}/buggy: a reply cut off at max_output_tokens is reported as finished "
        "by: status, cut item status, "
    )
    assert summary.endswith(STOCK)


# Stock llama-server sends no arguments.done for a call that finished either (tool-finishes, streamed).
FINISHED_CALL_WITHOUT_DONE = (
    "A reply that finished inside its limit is reported wrongly: function_call_arguments.done (none for the call "
    "'fc_stPj56etMdSabtdRSVyv2ywgIR8LSjo4': the streaming protocol sends it for every call, cut or finished)."
)


def test_buggy_text_prints_the_two_lines_of_the_write_up_and_each_aspect(server):
    lines = _check(f"{server.url}/buggy", "--probe", "text").stdout.splitlines()
    assert lines == [
        "/v1/responses max_output_tokens=8: status='completed' incomplete_details=None output_tokens=8",
        "/v1/chat/completions max_tokens=8: finish_reason='length' completion_tokens=8",
        "  dishonest status: 'completed' (says the reply finished)",
        "  wrong     incomplete_details.reason: absent (nothing says the reply was cut at max_output_tokens)",
        (
            "  dishonest cut item status: the last item ('message') says 'completed' "
            "(says the item being generated finished)"
        ),
        "  dishonest completed_at: 1796055997 (a completion time for a reply that did not complete)",
        (
            "  known variant: stock llama-server: 'completed' everywhere, no incomplete_details, no "
            "function_call_arguments.done (ggml-org/llama.cpp issue 30773)"
        ),
        # the same probe's request with room to finish (text-finishes), reported as finished
        "/v1/responses max_output_tokens=400: status='completed' incomplete_details=None output_tokens=8",
        "/v1/chat/completions max_tokens=400: finish_reason='stop' completion_tokens=8",
        "  honest    status: 'completed' (the reply finished, and says so)",
        "  honest    incomplete_details.reason: absent (no reason to be cut is given)",
        "  honest    item status: every item says 'completed' (every item finished, and says so)",
        "  honest    completed_at: 1796056002 (a completion time for a reply that completed)",
        (
            f"{server.url}/buggy: a reply cut off at max_output_tokens is reported as finished by: status, cut item "
            f"status, completed_at; also wrong: incomplete_details.reason. {STOCK}"
        ),
    ]


def test_buggy_names_every_aspect_across_the_probes(server):
    """Stock llama-server gets every aspect wrong somewhere: all six are named."""
    summary = _check(f"{server.url}/buggy", "--probe", "responses").stdout.splitlines()[-1]
    assert summary == (
        f"{server.url}/buggy: a reply cut off at max_output_tokens is reported as finished by: "
        "status, cut item status, completed_at, terminal event; also wrong: "
        f"incomplete_details.reason, function_call_arguments.done. {FINISHED_CALL_WITHOUT_DONE} {STOCK}"
    )


CHAT_HONEST = "a reply cut off at max_tokens is reported as finish_reason 'length'."


def test_buggy_is_dishonest_on_responses_honest_on_chat_and_exits_with_the_worse(server):
    """llama-server's chat endpoint is honest: by default both endpoints are probed, each verdict is
    printed on its own line, and the exit code is the worse endpoint's."""
    result = _check(f"{server.url}/buggy")
    assert result.returncode == 1, result.stdout
    responses, chat, overall = result.stdout.splitlines()[-3:]
    assert responses == (
        "/v1/responses dishonest: a reply cut off at max_output_tokens is reported as finished by: "
        "status, cut item status, completed_at, terminal event; also wrong: "
        f"incomplete_details.reason, function_call_arguments.done. {FINISHED_CALL_WITHOUT_DONE} {STOCK}"
    )
    assert chat == f"/v1/chat/completions honest: {CHAT_HONEST}"
    assert overall == (
        f"{server.url}/buggy: dishonest (exit 1), the worse of /v1/responses dishonest and /v1/chat/completions honest."
    )
    chat_only = _check(f"{server.url}/buggy", "--probe", "chat")
    assert chat_only.returncode == 0, chat_only.stdout
    assert chat_only.stdout.splitlines()[-1] == f"{server.url}/buggy: {CHAT_HONEST}"


def test_buggy_tool_and_stream_report_what_they_saw(server):
    out = _check(f"{server.url}/buggy", "--probe", "all").stdout
    assert "function_call status='completed' arguments='{\"path\": \"/tmp/hello.txt' (do not parse as JSON)" in out
    assert "last event='response.completed' status='completed'" in out
    assert "function_call_arguments.done for 0 of 1 calls" in out


@pytest.mark.parametrize("behaviour", ["fixed", "spec"])
@pytest.mark.parametrize("probe", ["text", "tool", "stream", "responses"])
def test_fixed_and_spec_exit_0(server, behaviour, probe):
    result = _check(f"{server.url}/{behaviour}/v1", "--probe", probe)
    assert result.returncode == 0, result.stdout
    assert "reported as 'incomplete'" in result.stdout.splitlines()[-1]


@pytest.mark.parametrize("behaviour", ["fixed", "spec"])
def test_fixed_and_spec_exit_0_on_both_endpoints(server, behaviour):
    result = _check(f"{server.url}/{behaviour}/v1")
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-3:] == [
        "/v1/responses honest: a reply cut off at max_output_tokens is reported as 'incomplete' "
        "(reason 'max_output_tokens').",
        f"/v1/chat/completions honest: {CHAT_HONEST}",
        f"{server.url}/{behaviour}: honest (exit 0), the worse of /v1/responses honest and "
        "/v1/chat/completions honest.",
    ]


def test_fixed_stream_reports_arguments_done(server):
    out = _check(f"{server.url}/fixed", "--probe", "stream").stdout
    assert "last event='response.incomplete' status='incomplete'" in out
    assert "function_call_arguments.done for 1 of 1 calls" in out


def test_unreachable_port_exits_2_with_the_reason():
    with BackgroundServer(web.Application()) as gone:
        url = gone.url
    result = _check(url)
    assert result.returncode == 2
    assert "cannot reach" in result.stdout and "Traceback" not in result.stderr


def _serving(handler) -> BackgroundServer:
    app = web.Application()
    app.router.add_post("/v1/responses", handler)
    app.router.add_post("/v1/chat/completions", handler)
    return BackgroundServer(app)


def test_a_server_that_answers_500_exits_2():
    async def broken(request):
        return web.json_response({"error": {"code": 500, "message": "boom", "type": "server_error"}}, status=500)

    with _serving(broken) as server:
        result = _check(server.url)
    assert result.returncode == 2
    assert "HTTP 500" in result.stdout


def test_a_server_that_answers_html_exits_2():
    async def html(request):
        return web.Response(text="<html><body>Welcome to nginx!</body></html>", content_type="text/html")

    with _serving(html) as server:
        result = _check(server.url, "--probe", "all")
    assert result.returncode == 2
    assert "not JSON" in result.stdout and "JSON server-sent events" in result.stdout


def test_a_server_that_never_answers_in_time_exits_2():
    async def slow(request):
        await asyncio.sleep(3)
        return web.json_response({})

    with _serving(slow) as server:
        result = _check(server.url, "--timeout", "0.3")
    assert result.returncode == 2
    assert "within 0.3 s" in result.stdout


@pytest.mark.parametrize("probe", ["tool", "chat-tool"])
@pytest.mark.parametrize("behaviour", ["buggy", "fixed"])
def test_a_twin_that_says_stop_proves_nothing_and_exits_2(server, behaviour, probe):
    """The text-finishes recording, chosen by a model equal to its scenario name: 'stop', 8 tokens
    of tool-cut-20's 20, and no tool call."""
    result = _check(f"{server.url}/{behaviour}", "--model", "text-finishes", "--probe", probe)
    assert result.returncode == 2
    assert "/v1/chat/completions max_tokens=20: finish_reason='stop' completion_tokens=8" in result.stdout
    assert "proves nothing" in result.stdout.splitlines()[-1]


def test_a_stop_at_exactly_the_limit_is_read_as_a_cut(server):
    """The usage fallback's one false positive, pinned: text-finishes took exactly 8 tokens and says
    'stop', and text-cut-8's limit is 8. check's cut requests cannot finish inside their limit, so
    a 'stop' with the usage at the limit is read as a cut the finish_reason hides."""
    result = _check(f"{server.url}/fixed", "--model", "text-finishes", "--probe", "chat-text")
    assert result.returncode == 1, result.stdout
    assert result.stdout.splitlines()[:2] == [
        "/v1/chat/completions max_tokens=8: finish_reason='stop' completion_tokens=8",
        "  dishonest finish_reason: 'stop' (says the reply finished)",
    ]


@pytest.mark.parametrize(("behaviour", "code", "verdict"), [("buggy", 1, "dishonest"), ("fixed", 0, "honest")])
def test_json_output_parses_and_carries_the_exit_codes_verdict(server, behaviour, code, verdict):
    result = _check(f"{server.url}/{behaviour}", "--probe", "all", "--json")
    report = json.loads(result.stdout)
    assert result.returncode == report["exit_code"] == code
    assert report["verdict"] == verdict
    assert [p["probe"] for p in report["probes"]][:4] == ["text", "tool", "stream", "stream"]
    assert [p["probe"] for p in report["probes"]][4:] == ["chat-text", "chat-tool", "chat-stream", "chat-stream"]
    assert {path: (e["verdict"], e["exit_code"]) for path, e in report["endpoints"].items()} == {
        "/v1/responses": (verdict, code),
        "/v1/chat/completions": ("honest", 0),
    }
    text = report["probes"][0]["observations"][0]["fields"]
    assert text["output_tokens"] == 8 and text["status"] == ("completed" if code else "incomplete")
    tool = report["probes"][1]["observations"][0]["fields"]
    assert tool["arguments_parse"] is False
    for probe in report["probes"][4:]:
        assert probe["endpoint"] == "/v1/chat/completions"
        assert [(aspect["name"], aspect["verdict"]) for aspect in probe["aspects"]] == [("finish_reason", "honest")]
    for probe in report["probes"][:4]:
        assert probe["endpoint"] == "/v1/responses"
        assert [aspect["name"] for aspect in probe["aspects"]] == [
            "status",
            "incomplete_details.reason",
            "cut_item.status",
            "completed_at",
            "terminal_event",
            "function_call_arguments.done",
        ]
        assert set(probe["aspects"][0]) == {"name", "verdict", "seen", "why"}
    assert report["probes"][0]["aspects"][0]["verdict"] == ("dishonest" if code else "honest")


def test_json_output_for_an_unreachable_server():
    with BackgroundServer(web.Application()) as gone:
        url = gone.url
    report = json.loads(_check(url, "--json").stdout)
    assert (report["verdict"], report["exit_code"]) == ("unknown", 2)
    assert "cannot reach" in report["probes"][0]["reason"]


def test_python_api(server):
    report = check.run(f"{server.url}/buggy", probes=["text", "tool"])
    assert report.exit_code == 1 and report.verdict == "dishonest"
    assert check.run(f"{server.url}/spec", probes=["all"]).exit_code == 0
    with pytest.raises(ValueError, match="unknown probe"):
        check.run(server.url, probes=["nope"])


def test_reasoning_probe_buggy_exits_1_and_fixed_exits_0(start_server):
    """The reasoning probe's prompt was recorded from the forced-thinking set-up: serve that one."""
    server = start_server(setup="smollm2-135m-forced-thinking")
    buggy = check.run(server.url + "/buggy", probes=["reasoning"])
    assert buggy.exit_code == 1, buggy.summary
    assert "reasoning item status='completed' output_text=''" in buggy.lines()[0]
    fixed = check.run(server.url + "/fixed", probes=["reasoning"])
    assert fixed.exit_code == 0, fixed.summary
    assert "reasoning item status='incomplete'" in fixed.lines()[0]


def test_reasoning_probe_cannot_tell_when_the_reply_has_no_reasoning_item(server):
    report = check.run(server.url + "/fixed", probes=["reasoning"], model="text-cut-8")
    assert report.exit_code == 2
    assert "no reasoning item" in report.summary and "--setup smollm2-135m-forced-thinking" in report.summary
