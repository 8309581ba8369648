"""`mockllama check` against hostile servers (issue 11, items 10 and 11): one deadline per
request, a cap on what is read, and exit 2 with a one-line reason for anything that is merely
broken. Exit 1 stays reserved for a well-formed reply judged against its twin: a cut reported as
finished or wrongly, or a finished reply reported as cut."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from urllib.parse import quote

import pytest
from aiohttp import web
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllama import check
from mockllama.check import probes
from mockllama.check.reading import StrictJSONError, strict_json
from mockllama.cli import main
from mockllama.server.background import BackgroundServer
from mockllama.wire.untrusted_http import Target, fetch
from support.doubles import basic_auth, long_reply

HONEST_TWIN = {"choices": [{"finish_reason": "length", "index": 0, "message": {"content": "1"}}]}
COMPLETED = {"status": "completed", "output": [], "usage": {"output_tokens": 8}}


class Hostile:
    """An aiohttp server whose answer to each endpoint is set per test: raw bytes on the socket,
    a JSON body, or an event stream."""

    def __init__(self):
        self.answers: dict[str, tuple] = {}
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.answer)
        self.server = BackgroundServer(app)

    async def answer(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        endpoint = "chat" if request.path.endswith("/chat/completions") else "responses"
        kind, *rest = self.answers[endpoint]
        if kind == "raw":
            request.transport.write(rest[0])
            request.transport.close()
            return web.Response()  # never sent: the transport is closed
        if kind == "json":
            status, value = rest
            body = value if isinstance(value, bytes) else json.dumps(value).encode()
            return web.Response(status=status, body=body, content_type="application/json")
        if kind == "drip":
            response = web.StreamResponse()
            await response.prepare(request)
            while True:
                await response.write(b" ")
                await asyncio.sleep(1)
        if kind == "endless":
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            block = b'data: {"type":"response.output_text.delta","delta":"' + b"x" * 4000 + b'"}\n\n'
            while True:
                await response.write(block)
        status, blocks = rest
        body = b"".join(
            block if isinstance(block, bytes) else f"data: {json.dumps(block)}\n\n".encode() for block in blocks
        )
        return web.Response(status=status, body=body, content_type="text/event-stream")


@pytest.fixture(scope="module")
def hostile():
    server = Hostile()
    with server.server:
        yield server


def _cli(*args):
    result = CliRunner().invoke(main, ["check", *args])
    return result


# 10. One deadline per request, and a cap


def test_a_server_that_drips_a_byte_a_second_is_cut_off_at_the_timeout(hostile):
    hostile.answers = {"responses": ("drip",), "chat": ("json", 200, HONEST_TWIN)}
    started = time.monotonic()
    report = check.run(hostile.server.url, probes=["text"], timeout=2)
    assert time.monotonic() - started < 15  # the old per-read timeout never fired: it ran forever
    assert report.exit_code == 2
    assert "within 2 s" in report.probes[0].reason


def test_an_endless_stream_is_cut_off_at_the_size_cap(hostile, monkeypatch):
    monkeypatch.setattr(probes, "MAX_REPLY_BYTES", 1024 * 1024)
    hostile.answers = {"responses": ("endless",), "chat": ("json", 200, HONEST_TWIN)}
    report = check.run(hostile.server.url, probes=["stream"], timeout=60)
    assert report.exit_code == 2
    assert "more than 1048576 bytes" in report.probes[0].reason


def test_the_default_cap_is_8_mib():
    assert probes.MAX_REPLY_BYTES == 8 * 1024 * 1024


# 11. Broken servers are "can't tell" (exit 2), never "dishonest" (exit 1)

OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
BROKEN = {
    "bad-status-line": ({"responses": ("raw", b"HTTP/1.1 abc\r\n\r\n")}, "malformed HTTP"),
    "not-http-at-all": ({"responses": ("raw", b"SSH-2.0-OpenSSH_9.6\r\n")}, "malformed HTTP"),
    "short-body": (
        {"responses": ("raw", b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"status"')},
        "IncompleteRead",
    ),
    "200-headers": (
        {"responses": ("raw", OK_HEAD + b"".join(b"X-%d: y\r\n" % n for n in range(200)) + b"\r\n{}")},
        "malformed HTTP",
    ),
    "70kb-header-line": (
        {"responses": ("raw", OK_HEAD + b"X-Long: " + b"y" * 70_000 + b"\r\n\r\n{}")},
        "malformed HTTP",
    ),
    "usage-is-a-list": ({"responses": ("json", 200, {"status": "completed", "usage": [1]})}, '"usage"'),
    "choices-is-a-string": (
        {"responses": ("json", 200, COMPLETED), "chat": ("json", 200, {"choices": "length"})},
        '"choices"',
    ),
    "stream-response-is-a-string": ({"responses": ("sse", 200, [{"response": "x"}])}, "not a JSON object"),
    "stream-with-0xff": ({"responses": ("sse", 200, [b'data: {"type":"x"}\n\n\xff\n\n'])}, "not UTF-8"),
    "100k-nested-arrays": ({"responses": ("json", 200, b"[" * 100_000 + b"]" * 100_000)}, "not JSON"),
    "status-is-a-list": ({"responses": ("json", 200, {"status": ["completed"]})}, '"status" string'),
    "finish-reason-is-a-list": (
        {"responses": ("json", 200, COMPLETED), "chat": ("json", 200, {"choices": [{"finish_reason": ["length"]}]})},
        "finish_reason",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_server_exits_2_with_a_one_line_reason(hostile, case):
    answers, words = BROKEN[case]
    hostile.answers = {"responses": ("json", 200, COMPLETED), "chat": ("json", 200, HONEST_TWIN), **answers}
    probe = "stream" if answers["responses"][0] == "sse" else "text"
    result = _cli(hostile.server.url, "--probe", probe, "--timeout", "10")
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    summary = result.output.strip().splitlines()[-1]
    assert "can't tell" in summary and words in summary, summary


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("localhost:18401", "not an http:// or https:// URL"),
        ("127.0.0.1:18401", "not an http:// or https:// URL"),
        ("http://127.0.0.1:99999", "not a usable URL"),
        ("http://", "not an http:// or https:// URL"),
        ("ftp://127.0.0.1/", "not an http:// or https:// URL"),
    ],
)
def test_an_unusable_url_exits_2_with_a_one_line_reason(url, words):
    result = _cli(url)
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), (result.output, result.exception)
    assert words in result.output.strip().splitlines()[-1]


def test_the_json_report_for_a_broken_server_is_valid_json(hostile):
    hostile.answers = {"responses": ("raw", b"HTTP/1.1 abc\r\n\r\n"), "chat": ("json", 200, HONEST_TWIN)}
    result = _cli(hostile.server.url, "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["verdict"] == "unknown"


# The property: whatever the server answers, exit 0, 1 or 2, and 1 only when it is earned.

KEYS = st.sampled_from(
    [
        "status",
        "usage",
        "output",
        "choices",
        "finish_reason",
        "response",
        "type",
        "id",
        "incomplete_details",
        "reason",
        "output_tokens",
        "item_id",
        "arguments",
        "message",
        "completion_tokens",
        "tool_calls",
        "function",
        "delta",
    ]
)
WORDS = st.sampled_from(
    [
        "completed",
        "incomplete",
        "length",
        "stop",
        "max_output_tokens",
        "function_call",
        "response.completed",
        "response.incomplete",
    ]
)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | WORDS
)
JSON = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=6), inner, max_size=5),
    max_leaves=25,
)
STATUSES = st.sampled_from([200, 200, 200, 201, 204, 301, 400, 404, 500])
RAW = (
    st.binary(max_size=200)
    | st.builds(lambda tail: b"HTTP/1.1 " + tail, st.binary(max_size=200))
    | st.builds(lambda tail: OK_HEAD + b"\r\n" + tail, st.binary(max_size=200))
)
BLOCK = JSON | st.binary(max_size=40) | st.builds(lambda v: f"event: x\ndata: {json.dumps(v)}\n\n".encode(), JSON)
ANSWER = (
    st.tuples(st.just("raw"), RAW)
    | st.tuples(st.just("json"), STATUSES, JSON)
    | st.tuples(st.just("json"), STATUSES, st.binary(max_size=100))
    | st.tuples(st.just("sse"), STATUSES, st.lists(BLOCK, max_size=5))
)


def _earned(answers: dict, probe: str) -> bool:
    """Could these answers be a fault found? (A necessary condition.) On /v1/responses, against its
    twin: a cut ('length', a usage, or arguments that may not parse) reported as finished or
    wrongly (a status: 'completed', 'incomplete', null or any other), or a finished reply reported
    as cut ('stop' against 'incomplete'). On /v1/chat/completions: a cut shown by a usage or by
    arguments, and a finish_reason other than 'length'."""
    responses, chat = answers["responses"], answers["chat"]
    shows_cut = any(word in repr(chat) for word in ("length", "completion_tokens", "arguments"))
    if probe.startswith("chat-"):
        return (
            chat[0] in ("json", "sse")
            and chat[1] == 200
            and any(word in repr(chat) for word in ("completion_tokens", "arguments"))
        )
    well_formed = all(a[0] in ("json", "sse") and a[1] == 200 for a in (responses, chat))
    cut = shows_cut and "'status'" in repr(responses)
    finished = "stop" in repr(chat) and "incomplete" in repr(responses)
    return well_formed and (cut or finished)


@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(responses=ANSWER, chat=ANSWER, probe=st.sampled_from(["text", "tool", "stream", "chat-text", "chat-stream"]))
def test_any_answer_gives_exit_0_1_or_2_and_1_only_when_earned(hostile, responses, chat, probe):
    hostile.answers = {"responses": responses, "chat": chat}
    report = check.run(hostile.server.url, probes=[probe], timeout=10)
    assert report.exit_code in (0, 1, 2)
    if report.exit_code == 1:
        assert _earned(hostile.answers, probe), report.summary
    line = report.summary
    assert "\n" not in line
    json.dumps(report.to_dict())  # --json can always print it


# Issue 27 item 2: llama-server's `Connection: close`, on a reply past http.client's first 8 KiB


def test_a_long_reply_with_connection_close_is_read_to_the_end(server):
    with BackgroundServer(long_reply.create_app(server.url)) as double:
        reply = fetch(
            Target.parse(double.url),
            "POST",
            "/v1/responses",
            {"model": "text-cut-8", "input": "x", "max_output_tokens": 8},
            timeout=30,
        )
        result = _cli(double.url, "--probe", "all", "--timeout", "30")
    assert reply.headers["Connection"] == "close" and len(reply.body) > 16 * 1024
    assert json.loads(reply.body)["status"] == "incomplete"
    assert result.exit_code == 0, result.output  # b518762: exit 2, "cannot reach ... (Bad file descriptor)"
    assert "Bad file descriptor" not in result.output


# Issue 27 item 13: credentials and a query in the URL are sent, and never printed


def test_credentials_and_query_in_the_url_are_sent_and_never_printed(server):
    app = basic_auth.create_app(server.url)
    with BackgroundServer(app) as proxy:
        password = quote(basic_auth.PASSWORD, safe="")
        url = f"http://{basic_auth.USER}:{password}@127.0.0.1:{proxy.port}/?key={basic_auth.KEY}"
        text = _cli(url, "--probe", "all")
        as_json = _cli(url, "--probe", "text", "--json")
    assert text.exit_code == 1, text.output  # the stock llama-server behind the proxy was reached and judged
    assert (
        as_json.exit_code == 1
        and json.loads(as_json.output)["url"] == f"http://REDACTED@127.0.0.1:{proxy.port}/?key=REDACTED"
    )
    assert text.output.splitlines()[-1].startswith(f"http://REDACTED@127.0.0.1:{proxy.port}/?key=REDACTED: dishonest")
    assert text.output.splitlines()[-3].startswith(
        "/v1/responses dishonest: a reply cut off at max_output_tokens is reported as finished"
    )
    for output in (text.output, as_json.output):
        for secret in ("s3cr", quote(basic_auth.PASSWORD, safe=""), basic_auth.KEY):
            assert secret not in output
    authorization = "Basic " + base64.b64encode(f"{basic_auth.USER}:{basic_auth.PASSWORD}".encode()).decode()
    # all: 4 Responses probes, each a cut request and one with room to finish, each with its chat twin,
    # and 4 chat probes, each a cut request and one with room to finish; then text's 4
    assert app[basic_auth.SEEN] == [(authorization, f"key={basic_auth.KEY}")] * (16 + 8 + 4)


@pytest.mark.parametrize(
    "url", ["http://bob:hunter2@127.0.0.1:1/", "http://127.0.0.1:1/v1?api_key=hunter2&v=1", "http://bob:hunter2@[::1"]
)
def test_a_password_in_a_url_that_fails_is_not_printed_either(url):
    for args in ((), ("--json",)):
        result = _cli(url, *args)
        assert result.exit_code == 2 and "hunter2" not in result.output, result.output


def test_a_query_without_secrets_is_printed_as_sent():
    target = Target.parse("http://127.0.0.1:8080/base/v1/?api-version=2024-10&x=%2F")
    assert target.shown == "http://127.0.0.1:8080/base?api-version=2024-10&x=%2F"
    assert target.path("/v1/responses") == "/base/v1/responses?api-version=2024-10&x=%2F"  # the query as written


# Issue 27 item 18: JSON that RFC 8259 rejects is "can't tell", never a verdict

RFC_8259 = {
    "nan": (
        {"responses": ("json", 200, b'{"status": "completed", "output": [], "usage": {"output_tokens": NaN}}')},
        "NaN is not JSON",
    ),
    "infinity": (
        {"responses": ("json", 200, b'{"status": "completed", "output": [], "x": -Infinity}')},
        "-Infinity is not JSON",
    ),
    "1e999": (
        {"responses": ("json", 200, b'{"status": "completed", "output": [], "usage": {"output_tokens": 1e999}}')},
        "the number 1e999 is out of range",
    ),
    "duplicate-status": (
        {
            "responses": (
                "json",
                200,
                b'{"status": "incomplete", "incomplete_details": {"reason": '
                b'"max_output_tokens"}, "output": [], "status": "completed"}',
            )
        },
        "the key 'status' appears twice in one object",
    ),
    "duplicate-finish-reason": (
        {"chat": ("json", 200, b'{"choices": [{"finish_reason": "stop", "finish_reason": "length"}]}')},
        "the key 'finish_reason' appears twice in one object",
    ),
    "stream-nan": (
        {
            "responses": (
                "sse",
                200,
                [
                    b'data: {"type": "response.completed", "response": {"status": '
                    b'"completed", "output": [], "completed_at": NaN}}\n\n'
                ],
            ),
            "chat": ("sse", 200, [{"choices": [{"finish_reason": "length"}]}]),
        },
        "NaN is not JSON",
    ),
}


@pytest.mark.parametrize("case", sorted(RFC_8259))
def test_json_that_rfc_8259_rejects_is_cant_tell(hostile, case):
    answers, words = RFC_8259[case]
    hostile.answers = {"responses": ("json", 200, COMPLETED), "chat": ("json", 200, HONEST_TWIN), **answers}
    probe = "stream" if answers.get("responses", ("json",))[0] == "sse" else "text"
    result = _cli(hostile.server.url, "--probe", probe, "--timeout", "10")
    assert result.exit_code == 2, result.output  # b518762: exit 1, a verdict on what a parser guessed
    summary = result.output.strip().splitlines()[-1]
    assert "can't tell" in summary and "RFC 8259 rejects" in summary and words in summary, summary


def test_strict_json_takes_what_rfc_8259_takes():
    assert strict_json('{"a": [1, 2.5, -0.0, 1e300, "NaN", true, null], "b": {"a": 1}}') == {
        "a": [1, 2.5, -0.0, 1e300, "NaN", True, None],
        "b": {"a": 1},
    }
    with pytest.raises(StrictJSONError):
        strict_json('{"a": 1, "a": 1}')
    with pytest.raises(ValueError) as raised:
        strict_json("[DONE]")
    assert not isinstance(raised.value, StrictJSONError)
