"""`mockllama record` against hostile or careless setups (issue 11, items 12 to 15): credentials
never written, replies capped, redirects reported and not followed, and a clear exit 2 instead of
a traceback. The recorder records from mockllama itself here; tests/live/ uses llama-server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from aiohttp import web

from mockllama.app import create_app
from mockllama.recordings.cassettes import load_scenarios
from mockllama.server.background import BackgroundServer
from mockllama.wire.scrub import is_secret_header, scrub_command
from support.recordings import SCENARIOS

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
SECRET = "sk-planted-secret-0123456789"
PASSWORD = "PlantedPassw0rd"
TEXT_CUT_8 = {
    "model": "x",
    "input": "Count from 1 to 200, separated by spaces.",
    "max_output_tokens": 8,
    "temperature": 0,
}


def _record(url, out, *args, timeout=120):
    return subprocess.run(
        [*MOCKLLAMA, "record", "--server", url, "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _catalogue(tmp_path, requests, name="one") -> str:
    path = tmp_path / f"catalogue-{name}.json"
    path.write_text(json.dumps({"scenarios": [{"name": name, "requests": requests}]}))
    return str(path)


def _everything_written(out) -> str:
    return "\n".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())


# 12. Credentials: URL, --server-command, any header named like one


def test_a_password_in_the_server_url_is_sent_but_never_written(tmp_path):
    seen = []

    @web.middleware
    async def note_auth(request, handler):
        seen.append(request.headers.get("Authorization"))
        return await handler(request)

    app = create_app(SCENARIOS)
    app.middlewares.append(note_auth)
    out = tmp_path / "out"
    with BackgroundServer(app) as server:
        url = server.url.replace("http://", f"http://alice:{PASSWORD}@")
        result = _record(url, out, "--scenario", "text-cut-8")
    assert result.returncode == 0, result.stderr
    assert seen and all(value and value.startswith("Basic ") for value in seen)  # it was used
    written = _everything_written(out)
    assert PASSWORD not in written and "alice" not in written
    assert PASSWORD not in result.stdout + result.stderr
    assert load_scenarios([out])["text-cut-8"].interactions  # still a good cassette


def test_server_command_secrets_are_redacted_in_provenance(server, tmp_path):
    command = (
        f"llama-server -m /models/x.gguf --api-key {SECRET} --hf-token=hf_plantedtoken123 "
        f"HF_TOKEN=hf_plantedtoken456 --port 8080 --alias x"
    )
    out = tmp_path / "out"
    result = _record(server.url, out, "--scenario", "text-cut-8", "--server-command", command)
    assert result.returncode == 0, result.stderr
    provenance = json.loads((out / "provenance.json").read_text())
    assert SECRET not in json.dumps(provenance) and "hf_planted" not in json.dumps(provenance)
    assert provenance["server_command"] == (
        "llama-server -m /models/x.gguf --api-key REDACTED --hf-token=REDACTED HF_TOKEN=REDACTED --port 8080 --alias x"
    )


@pytest.mark.parametrize(
    ("command", "kept"),
    [
        ("llama-server --api-key sk-abcdefgh1234", "llama-server --api-key REDACTED"),
        ("llama-server --api-key-file /keys", "llama-server --api-key-file REDACTED"),
        ("curl -H 'X-Api-Key: abc' http://u:p@h/x", "curl -H 'X-Api-Key: REDACTED' http://REDACTED@h/x"),
        ("run --header 'Authorization: Bearer abc'", "run --header 'Authorization: REDACTED'"),
        ("llama-server -m m.gguf --port 8080", "llama-server -m m.gguf --port 8080"),
    ],
)
def test_scrub_command(command, kept):
    assert scrub_command(command) == kept


def test_any_header_named_like_a_credential_is_scrubbed(tmp_path):
    planted = {
        "X-Auth-Token": SECRET,
        "X-My-Secret": SECRET,
        "Proxy-Authorization": SECRET,
        "X-Session-Id": SECRET,
        "X-Custom-ApiKey": SECRET,
        "X-Password": SECRET,
    }

    @web.middleware
    async def plant(request, handler):
        response = await handler(request)
        response.headers["X-Upstream-Token"] = SECRET
        response.headers["Set-Cookie"] = f"sid={SECRET}"
        return response

    app = create_app(SCENARIOS)
    app.middlewares.append(plant)
    catalogue = _catalogue(tmp_path, [{"path": "/v1/responses", "headers": planted, "json": TEXT_CUT_8}])
    out = tmp_path / "out"
    with BackgroundServer(app) as server:
        result = _record(server.url, out, "--catalogue", catalogue)
    assert result.returncode == 0, result.stderr
    written = _everything_written(out)
    assert SECRET not in written
    assert "Content-Type" in written


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "X-API-KEY",
        "api-key",
        "X-Goog-Api-Key",
        "Cookie",
        "Set-Cookie",
        "X-Amz-Security-Token",
        "X-Access-Token",
        "X-Client-Secret",
    ],
)
def test_credential_header_names(name):
    assert is_secret_header(name)


@pytest.mark.parametrize(
    "name",
    [
        "Content-Type",
        "Content-Length",
        "Server",
        "Keep-Alive",
        "Date",
        "Access-Control-Allow-Origin",
        "X-Mockllama-Scenario",
    ],
)
def test_ordinary_header_names_are_kept(name):
    assert not is_secret_header(name)


# 13. A cap on what one reply may be


async def _big(request):
    await request.read()
    return web.Response(body=b"x" * 3_000_000, content_type="application/json")


async def _endless(request):
    await request.read()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    while True:
        await response.write(b"data: " + b"y" * 60_000 + b"\n\n")
        await asyncio.sleep(0)


def _two_scenarios(tmp_path, path: str) -> str:
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(
        json.dumps(
            {
                "scenarios": [
                    {"name": "too-big", "requests": [{"path": path, "json": {"x": 1}}]},
                    {"name": "fine", "requests": [{"path": "/v1/responses", "json": TEXT_CUT_8}]},
                ]
            }
        )
    )
    return str(catalogue)


@pytest.mark.parametrize(("handler", "path"), [(_big, "/x/big"), (_endless, "/x/endless")])
def test_a_reply_over_the_cap_fails_its_scenario_clearly(tmp_path, handler, path):
    app = create_app(SCENARIOS)
    app.router.add_route("*", path, handler)  # a path of its own: aiohttp prefers it to the catch-all
    out = tmp_path / "out"
    with BackgroundServer(app) as server:
        result = _record(
            server.url,
            out,
            "--catalogue",
            _two_scenarios(tmp_path, path),
            "--max-reply-bytes",
            "1000000",
            "--timeout",
            "60",
        )
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "more than 1000000 bytes" in result.stdout and "--max-reply-bytes" in result.stdout
    assert "not recorded: too-big" in result.stderr and "Traceback" not in result.stderr
    assert not (out / "too-big.yaml").exists()
    assert (out / "fine.yaml").exists()


def test_the_default_cap_is_64_mib_and_documented():
    result = subprocess.run([*MOCKLLAMA, "record", "--help"], capture_output=True, text=True)
    assert "--max-reply-bytes" in result.stdout and "67108864" in result.stdout


# 14. Redirects are reported, never followed


def test_a_redirect_is_reported_and_not_followed(tmp_path):
    elsewhere_hits = []

    async def elsewhere(request):
        elsewhere_hits.append(await request.read())
        return web.json_response({"status": "completed"})

    foreign = web.Application()
    foreign.router.add_route("*", "/{tail:.*}", elsewhere)
    with BackgroundServer(foreign) as other:

        async def redirect(request):
            raise web.HTTPTemporaryRedirect(f"{other.url}{request.path}")

        async def recorded(request):  # llama-server's own GET answers, from the recordings
            interaction = SCENARIOS["server-info"].find("GET", request.path, False)
            return web.Response(body=interaction.body, content_type="application/json")

        app = web.Application()
        for path in ("/health", "/props", "/v1/models"):
            app.router.add_get(path, recorded)
        app.router.add_post("/v1/{tail:.*}", redirect)
        out = tmp_path / "out"
        with BackgroundServer(app) as server:
            result = _record(server.url, out, "--scenario", "text-cut-8")
    assert result.returncode == 2
    assert "redirect" in result.stderr and "307" in result.stderr and other.url in result.stderr
    assert "Traceback" not in result.stderr
    assert elsewhere_hits == []  # no request body was re-sent there
    assert not (out / "text-cut-8.yaml").exists()


# 15. A clear message and exit 2, never a traceback


def _raw_server(raw: bytes) -> BackgroundServer:
    async def answer(request):
        request.transport.write(raw)
        request.transport.close()
        return web.Response()

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    return BackgroundServer(app)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"HTTP/1.1 abc\r\n\r\n", "cannot be read"),
        (
            b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"status"',
            "cannot be read",
        ),
    ],
)
def test_a_malformed_reply_exits_2_with_a_message(tmp_path, raw, words):
    with _raw_server(raw) as server:
        result = _record(server.url, tmp_path / "out")
    assert result.returncode == 2, result.stderr
    assert words in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("localhost:18401", "not an http:// or https:// URL"),
        ("http://127.0.0.1:99999", "not a usable URL"),
        (f"http://alice:{PASSWORD}@127.0.0.1:99999", "not a usable URL"),
    ],
)
def test_an_unusable_server_url_exits_2(tmp_path, url, words):
    result = _record(url, tmp_path / "out")
    assert result.returncode == 2
    assert words in result.stderr and "Traceback" not in result.stderr
    assert PASSWORD not in result.stderr


def test_a_url_password_together_with_api_key_exits_2(tmp_path, server):
    url = server.url.replace("http://", f"http://alice:{PASSWORD}@")
    result = _record(url, tmp_path / "out", "--api-key", SECRET)
    assert result.returncode == 2
    assert "keep only one" in result.stderr and "Traceback" not in result.stderr
    assert PASSWORD not in result.stderr and SECRET not in result.stderr
