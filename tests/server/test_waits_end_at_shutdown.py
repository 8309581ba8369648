"""Every wait of mockllama's own ends when the server is asked to stop (issue 55, item 3).

A stalled reply (`stall=MS`, `--delay`, `--pace`) held `serve` for 60 s after SIGTERM with no
client left and 121 s with one, and `BackgroundServer.stop()` (the pytest plugin's) as long:
aiohttp waits for the handlers in progress. docs/container.md says SIGTERM stops at once, and
`docker stop` kills after 10 s. These tests stop a server whose only request waits for minutes.
"""

from __future__ import annotations

import http.client
import json
import signal
import threading
import time
from pathlib import Path

import pytest

from mockllama.app import ServeOptions, create_app
from mockllama.server.background import BackgroundServer
from support.httpkit import request_bytes
from support.recordings import SCENARIOS
from support.serving import serve_process
from support.waiting import wait_for

TEXT_CUT_8 = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False)
STREAMED = SCENARIOS["text-cut-8"].find("POST", "/v1/responses", True)
STALL = {"X-Mockllama-Fault": "stall=600000"}  # ten minutes
STOPPED_WITHIN = 2.0  # seconds: what `docker stop` and a CI job need of SIGTERM
SLACK = 1.0  # what a loaded 2-core machine may add to it


class Waiting:
    """A client whose request waits on the server: it keeps what it got, or the error it met."""

    def __init__(self, url: str, body: bytes, headers: dict, timeout: float = 120):
        port = int(url.rsplit(":", 1)[1])
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.connection.request("POST", "/v1/responses", body=body, headers=headers)
        self.got: list = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            response = self.connection.getresponse()
            self.got.append((response.status, response.read()))
        except (http.client.HTTPException, OSError) as err:
            self.got.append(err)

    def answered(self, seconds: float):
        self.thread.join(seconds)
        self.connection.close()
        return self.got[0] if self.got else None


def _in_handler(url: str) -> None:
    """Long enough for the request to reach its wait: the journal has no entry until it ends."""
    time.sleep(0.5)


def _exits_within(process, seconds: float) -> float | None:
    """How long ``process`` took to exit, or None (and it is killed) if it still runs after ``seconds``."""
    started = time.monotonic()
    if wait_for(lambda: process.poll() is not None, seconds, interval=0.05):
        return time.monotonic() - started
    process.kill()
    process.wait()
    return None


WAITS = {
    "stall": ([], STALL, TEXT_CUT_8),
    "delay": (["--delay", "600000"], {}, TEXT_CUT_8),
    "pace of a plain body": (["--pace", "0.001"], {}, TEXT_CUT_8),
    "pace of a stream": (["--pace", "0.001"], {}, STREAMED),
    "stall between events": ([], {"X-Mockllama-Fault": "stall-between=600000"}, STREAMED),
}


@pytest.mark.parametrize("how", list(WAITS))
@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_stops_at_once_while_a_client_waits_on_a_wait_of_its_own(tmp_path, how, sent):
    args, headers, interaction = WAITS[how]
    with serve_process(args, tmp_path / "serve.log") as (process, url):
        client = Waiting(url, request_bytes(interaction), headers)
        _in_handler(url)
        process.send_signal(sent)
        took = _exits_within(process, STOPPED_WITHIN + SLACK)
        assert took is not None, f"serve was still running {STOPPED_WITHIN + SLACK} s after {sent.name}"
        answer = client.answered(5)
    assert answer is not None, "the client was left hanging"
    if isinstance(answer, tuple):  # answered before the head was sent: why, in llama-server's shape
        status, body = answer
        assert status == 503 and "shutting down" in json.loads(body)["error"]["message"], answer
    assert "Traceback" not in Path(tmp_path / "serve.log").read_text()


def test_serve_stops_at_once_when_the_client_of_a_stalled_reply_has_gone(tmp_path):
    with serve_process([], tmp_path / "serve.log") as (process, url):
        client = Waiting(url, request_bytes(TEXT_CUT_8), STALL, timeout=0.5)
        assert isinstance(client.answered(5), TimeoutError)  # it gave up; the handler still waits
        process.send_signal(signal.SIGTERM)
        took = _exits_within(process, STOPPED_WITHIN + SLACK)
        assert took is not None, f"serve was still running {STOPPED_WITHIN + SLACK} s after SIGTERM"


def test_a_background_server_stops_at_once_while_a_reply_stalls():
    """The pytest plugin's server: its stop() ends the session."""
    server = BackgroundServer(create_app(SCENARIOS, ServeOptions(delay=600_000))).start()
    client = Waiting(server.url, request_bytes(TEXT_CUT_8), STALL)
    _in_handler(server.url)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < STOPPED_WITHIN + SLACK
    status, body = client.answered(5)
    assert status == 503 and "shutting down" in json.loads(body)["error"]["message"]
