"""Each command loads what it needs and nothing else: `serve` replays without the recorder, the
other commands, the teaching tools, vcrpy or YAML, and the pytest plugin loads no server until a
test asks for one. What a process has imported is read from its ``sys.modules``, never timed."""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys

import pytest

from mockllama.cli import replays_only

pytest_plugins = ["pytester"]

# Run as `python -c PORT OPTIONS...`: `mockllama serve` in this process, from its own command line as
# the installed command runs it; once it answers (any status), print what it had loaded.
SERVE_AND_LIST = """
import gc, json, os, socket, sys, threading, time
from mockllama.cli import main

port, body = int(sys.argv[1]), b'{"model": "text-cut-8", "input": "Hi"}'
sys.argv = ["mockllama", "serve", "--port", sys.argv[1], *sys.argv[2:]]
request = b"POST /v1/responses HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\n"
request += b"Content-Length: %d\\r\\nConnection: close\\r\\n\\r\\n%s" % (len(body), body)

def answer():
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(request)
            return sock.recv(12).decode()
    except OSError:
        return None

def report():
    while (status := answer()) is None:
        time.sleep(0.05)
    import aiohttp.connector  # its default TLS context: no public name shows what it trusts
    seen = {
        "status": status.split()[-1],
        "modules": sorted(sys.modules),
        "trusted": aiohttp.connector._SSL_CONTEXT_VERIFIED.cert_store_stats()["x509_ca"],
        "ca_file": os.environ.get("SSL_CERT_FILE"),
        "collecting": gc.isenabled(),
    }
    print("SEEN " + json.dumps(seen), flush=True)
    os._exit(0)

threading.Thread(target=report, daemon=True).start()
main()
"""

# What replaying recordings never needs.
NOT_FOR_REPLAY = (
    "vcr",  # reads a cassette's YAML: a start from the cassette index reads none
    "yaml",
    "multiprocessing",  # reads many cassettes at once, on a start that has no index
    "mockllama.upstream.proxy",  # serve --upstream: forward, record
    "mockllama.upstream.record_on_miss",
    "mockllama.upstream.flight",
    "mockllama.upstream.forwarding",
    "mockllama.upstream.scenario_names",
    "mockllama.upstream.server_info",
    "mockllama.upstream.cassette_writer",
    "mockllama.recordings.record",  # mockllama record
    "mockllama.recordings.catalogue",
    "mockllama.check",  # mockllama check
    "mockllama.check.probes",
    "mockllama.check.reading",
    "mockllama.check.report",
    "mockllama.check.variants",
    "mockllama.check.verdicts",
    "mockllama.wire.untrusted_http",
    "mockllama.teaching.explain",  # mockllama explain, and the teaching page's data once asked for
    "mockllama.teaching.journal_client",
    "mockllama.teaching.matrix",
    "mockllama.teaching.fault_matrix",
    "mockllama.commands.check",
    "mockllama.commands.explain",
    "mockllama.commands.record",
    "mockllama.commands.scenarios",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_and_list(index_dir, *options: str) -> dict:
    """What a fresh `mockllama serve` had when it answered: the status of its first reply, the
    modules loaded, how many CAs aiohttp's default TLS context trusts, and SSL_CERT_FILE."""
    result = subprocess.run(
        [sys.executable, "-c", SERVE_AND_LIST, str(_free_port()), *options],
        env={**os.environ, "MOCKLLAMA_INDEX_DIR": str(index_dir)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = next((line for line in result.stdout.splitlines() if line.startswith("SEEN ")), None)
    assert line is not None, result.stdout + result.stderr
    return json.loads(line.removeprefix("SEEN "))


def test_serve_answers_its_first_request_without_loading_what_only_recording_or_teaching_needs(tmp_path):
    _serve_and_list(tmp_path)  # the first start reads every cassette and writes the index
    seen = _serve_and_list(tmp_path)
    assert seen["status"] == "200" and seen["collecting"]  # the collector paused for the start only
    loaded = set(seen["modules"])
    assert {"mockllama.commands.serve", "mockllama.server.app", "aiohttp.web"} <= loaded
    assert sorted(loaded & set(NOT_FOR_REPLAY)) == []


def test_serve_with_an_upstream_loads_the_recorder(tmp_path):
    """The other side of the test above: what it looks for is loaded when it is needed."""
    seen = _serve_and_list(tmp_path, "--upstream", "http://127.0.0.1:9", "--record-to", str(tmp_path / "rec"))
    assert {"mockllama.upstream.proxy", "mockllama.upstream.record_on_miss", "mockllama.recordings.record"} <= set(
        seen["modules"]
    )


def test_serve_reads_the_ca_bundle_only_when_it_connects_out(tmp_path):
    """aiohttp's default TLS context, made as aiohttp is imported, trusts no CA in a server that only
    replays, and the system's in one with an upstream; SSL_CERT_FILE is left as it was in both."""
    system = ssl.create_default_context().cert_store_stats()["x509_ca"]
    replaying = _serve_and_list(tmp_path)
    recording = _serve_and_list(tmp_path, "--upstream", "https://127.0.0.1:9", "--record-to", str(tmp_path / "rec"))
    assert (replaying["trusted"], recording["trusted"]) == (0, system)
    assert replaying["ca_file"] == recording["ca_file"] == os.environ.get("SSL_CERT_FILE")


@pytest.mark.parametrize(
    ("words", "replays"),
    [
        (["serve"], True),
        (["serve", "--port", "0", "--behaviour", "fixed"], True),
        (["serve", "--upstream", "https://example.test"], False),
        (["serve", "--port", "0", "--upstream=https://example.test"], False),
        (["record", "--server", "https://example.test"], False),
        (["scenarios"], False),
        ([], False),
    ],
)
def test_only_serve_without_an_upstream_imports_aiohttp_with_no_ca_file(words, replays):
    assert replays_only(words) is replays


PLUGIN_SESSION = """
import sys


def test_pytest_loads_the_plugin_without_anything_else_of_mockllamas():
    loaded = [name for name in sys.modules if name.startswith(("mockllama.", "aiohttp", "yaml", "vcr"))]
    assert sorted(loaded) == ["mockllama.pytest_plugin", "mockllama.pytest_plugin.starting"]
"""

FIXTURE_SESSION = """
import sys


def test_the_server_is_loaded_for_a_test_that_asks_for_it(mockllama):
    assert "mockllama.server.app" in sys.modules and mockllama.url.startswith("http://127.0.0.1:")
"""


def test_the_pytest_plugin_loads_no_server_until_a_test_asks_for_one(pytester, monkeypatch):
    """No other plugin is loaded (some import aiohttp themselves); mockllama's is named, as its entry
    point names it. When the server is loaded, for a session that asks, tests/plugin/test_plugin_starting.py says."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name, source in (("test_no_server", PLUGIN_SESSION), ("test_server", FIXTURE_SESSION)):
        path = pytester.makepyfile(**{name: source})
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "mockllama.pytest_plugin", path)
        result.assert_outcomes(passed=1)
