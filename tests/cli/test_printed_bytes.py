"""What a server sends reaches the terminal only through ``wire.terminal.printable`` (issue 47,
item 3): `check` and `record` print a hostile server's escape sequences as ``\\x1b``-style text, on a
terminal (click keeps escapes when colour is on) and piped (click strips only CSI colours when
piped, so an OSC title change would pass)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from aiohttp import web
from click.testing import CliRunner

from mockllama.cli import main
from mockllama.server.background import BackgroundServer
from support.recordings import SCENARIOS

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
# An OSC title change ended by BEL, a screen clear, a colour, and a C1 CSI (U+009B).
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\x9b31mred"
HOSTILE_BYTES = HOSTILE.encode("latin-1")
# Every control character but the line feed that ends each line.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _controls(output: str | bytes) -> list[str]:
    text = output.decode("utf-8", errors="replace") if isinstance(output, bytes) else output
    return _CONTROL.findall(text)


def _raw_app(raw: bytes) -> web.Application:
    async def answer(request):
        await request.read()
        request.transport.write(raw)
        request.transport.close()
        return web.Response()  # never sent: the transport is closed

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    return app


def _printed_by_both(args: list[str]) -> list[tuple[str, str]]:
    """What ``mockllama ARGS`` prints, as a terminal would show it (click's colour on) and piped."""
    on_terminal = CliRunner().invoke(main, args, color=True)
    piped = subprocess.run([*MOCKLLAMA, *args], capture_output=True, timeout=120)
    return [
        ("terminal", on_terminal.output),
        ("piped", (piped.stdout + piped.stderr).decode("utf-8", errors="replace")),
    ]


# `check`: the malformed HTTP it reports, and the values it quotes

MALFORMED = {
    "bad status line": b"HTTP/1.1 " + HOSTILE_BYTES + b" OK\r\n\r\n",
    "unknown protocol": b"HTTP/" + HOSTILE_BYTES + b" 200 OK\r\n\r\n",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_check_prints_no_escape_sequence_from_malformed_http(case):
    with BackgroundServer(_raw_app(MALFORMED[case])) as hostile:
        printed = _printed_by_both(["check", hostile.url, "--timeout", "10"])
        as_json = _printed_by_both(["check", hostile.url, "--timeout", "10", "--json"])
    for how, output in printed:
        assert "malformed HTTP" in output, (how, output)
        assert _controls(output) == [], (how, output)
        assert "\\x1b]0;pwned\\x07" in output, (how, output)  # shown, not hidden
    for how, output in as_json:
        assert _controls(output) == [], (how, output)
        assert "malformed HTTP" in json.loads(output)["summary"], (how, output)


def _json_app(responses: dict, chat: dict) -> web.Application:
    async def answer(request):
        await request.read()
        body = chat if request.path.endswith("/chat/completions") else responses
        return web.json_response(body)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    return app


def test_check_prints_no_escape_sequence_from_the_values_it_quotes():
    responses = {"status": HOSTILE, "output": [{"type": HOSTILE, "status": HOSTILE}], "completed_at": HOSTILE}
    chat = {"choices": [{"finish_reason": "length"}]}
    with BackgroundServer(_json_app(responses, chat)) as hostile:
        printed = _printed_by_both(["check", hostile.url, "--timeout", "10"])
    for how, output in printed:
        assert "status=" in output, (how, output)
        assert _controls(output) == [], (how, output)


# `record`: the server's build_info, model id, each reply's status and finish_reason


def _llama_server_double(hostile: str) -> web.Application:
    """A llama-server whose own words (build, model, status, finish_reason) carry escapes."""
    props = json.loads(SCENARIOS["server-info"].find("GET", "/props", False).body)
    props["build_info"] = hostile

    async def get(request):
        if request.path == "/props":
            return web.json_response(props)
        if request.path == "/v1/models":
            return web.json_response({"object": "list", "data": [{"id": hostile, "object": "model"}]})
        return web.json_response({"status": "ok"})

    async def post(request):
        await request.read()
        if request.path.endswith("/chat/completions"):
            return web.json_response({"choices": [{"index": 0, "finish_reason": hostile, "message": {}}]})
        return web.json_response({"status": hostile, "output": []})

    app = web.Application()
    app.router.add_get("/{tail:.*}", get)
    app.router.add_post("/{tail:.*}", post)
    return app


def test_record_prints_no_escape_sequence_from_what_the_server_says(tmp_path):
    with BackgroundServer(_llama_server_double(HOSTILE)) as hostile:
        printed = _printed_by_both(
            ["record", "--server", hostile.url, "--out", str(tmp_path), "--scenario", "text-cut-8"]
        )
    for how, output in printed:
        assert "text-cut-8" in output, (how, output)
        assert _controls(output) == [], (how, output)
        assert "build \\x1b]0;pwned\\x07" in output, (how, output)  # shown, not hidden


RECORD_REFUSES = {
    **{case: (raw, "cannot be read") for case, raw in MALFORMED.items()},
    "redirect": (
        b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://elsewhere/" + HOSTILE.encode() + b"\r\n"
        b"Content-Length: 0\r\n\r\n",
        "redirect",
    ),
}


@pytest.mark.parametrize("case", sorted(RECORD_REFUSES))
def test_record_prints_no_escape_sequence_from_a_reply_it_refuses(tmp_path, case):
    raw, words = RECORD_REFUSES[case]
    with BackgroundServer(_raw_app(raw)) as hostile:
        printed = _printed_by_both(["record", "--server", hostile.url, "--out", str(tmp_path / "out")])
    for how, output in printed:
        assert words in output, (how, output)
        assert _controls(output) == [], (how, output)
