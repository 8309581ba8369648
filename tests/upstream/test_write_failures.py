"""`serve --upstream`: a recording that cannot be written is this machine's fault, and says so.

Issue 47 item 2: an unwritable record directory was reported as "cannot reach the upstream
llama-server ... nothing was recorded. Start it", even when the upstream had answered, and even
when only provenance.json failed and the cassette was written and served. As nginx tells its own
failure (500, naming the path and errno) from an upstream's (502), so does mockllama.

Each condition is made for real where a test can make it: a directory where the cassette goes
(EISDIR), an immutable directory (EPERM, as root), a read-only one (EACCES, not as root), a
file-size limit in a process of its own (EFBIG), and a read-only or full file system mounted in a
namespace of its own (EROFS, ENOSPC) where ``unshare`` may make one. ENOSPC and EROFS are also
raised by a stand-in for the rename, so that they are covered where no namespace can be made.
The upstream is a test double of llama-server b11434 (tests/support/doubles/llama_server.py).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import resource
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from mockllama.app import create_app
from mockllama.recordings.cassettes import load_cassette
from mockllama.server.background import BackgroundServer
from mockllama.upstream.client import parse_upstream
from mockllama.upstream.proxy import RECORDER
from mockllama.upstream.record_on_miss import RecordOnMiss
from support.doubles.llama_server import answering_responses_with, grown_reply
from support.httpkit import call
from support.recordings import SCENARIOS
from support.serving import serve_process
from support.waiting import wait_for

REQUEST = json.dumps(SCENARIOS["text-cut-8"].find("POST", "/v1/responses", False).request_json).encode()
MINE = {"X-Mockllama-Scenario": "mine"}


@pytest.fixture
def upstream():
    with BackgroundServer(create_app(SCENARIOS)) as running:
        yield running


@pytest.fixture
def record_dir(tmp_path) -> Path:
    directory = tmp_path / "recorded"
    directory.mkdir()
    return directory


@pytest.fixture
def proxy(upstream, record_dir):
    with BackgroundServer(
        create_app({}, record_on_miss=RecordOnMiss(parse_upstream(upstream.url), record_dir))
    ) as mock:
        yield mock


def _cassettes(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*.yaml") if p.is_file())


def _settle(mock: BackgroundServer) -> None:
    """Until no recording is in progress: a buggy client has its reply before the write."""
    assert wait_for(lambda: not mock.app[RECORDER].in_flight, 10)


def _local_failure(status: int, body: bytes, code: str, path: Path) -> str:
    """The 500 a client waiting for the recording gets: this machine's fault, its errno, its path."""
    error = json.loads(body)["error"]
    assert (status, error["code"], error["type"]) == (500, 500, "server_error"), error
    message = error["message"]
    assert code in message and str(path) in message, message
    assert "could not write" in message and "nothing was recorded" in message.lower()
    assert "cannot reach" not in message and "Start it" not in message
    return message


# --- made for real, in this process ------------------------------------------------------------------


def test_a_directory_where_the_cassette_goes_is_a_500_naming_it_and_eisdir(proxy, record_dir):
    (record_dir / "mine.yaml").mkdir()
    status, _, body = call(proxy.url, "POST", "/fixed/v1/responses", REQUEST, MINE)
    _local_failure(status, body, "EISDIR", record_dir / "mine.yaml")
    assert (record_dir / "mine.yaml").is_dir() and _cassettes(record_dir) == []


@contextlib.contextmanager
def _immutable(directory: Path):
    """``chattr +i``: not even root may add a file to it (EPERM). Skips where chattr cannot."""
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(directory)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here (needs root and a file system that has it)")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(directory)], check=True)


def test_an_immutable_record_directory_is_a_500_naming_it_and_eperm(proxy, record_dir):
    with _immutable(record_dir):
        status, _, body = call(proxy.url, "POST", "/fixed/v1/responses", REQUEST, MINE)
    _local_failure(status, body, "EPERM", record_dir)
    assert _cassettes(record_dir) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to a directory whatever its mode")
def test_a_read_only_record_directory_is_a_500_naming_it_and_eacces(proxy, record_dir):
    record_dir.chmod(0o555)
    try:
        status, _, body = call(proxy.url, "POST", "/fixed/v1/responses", REQUEST, MINE)
    finally:
        record_dir.chmod(0o755)
    _local_failure(status, body, "EACCES", record_dir)
    assert _cassettes(record_dir) == []


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS], ids=["ENOSPC", "EROFS"])
def test_a_full_or_read_only_file_system_is_a_500_naming_it(proxy, record_dir, monkeypatch, code):
    """The rename into place fails as the kernel fails it on a full (ENOSPC) or read-only (EROFS)
    file system: a stand-in for ``os.replace`` raises, for the record directory's cassettes only."""
    real = os.replace

    def failing(source, target, *args, **kwargs):
        if Path(target).parent == record_dir and str(target).endswith(".yaml"):
            raise OSError(code, os.strerror(code), str(target))
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", failing)
    status, _, body = call(proxy.url, "POST", "/fixed/v1/responses", REQUEST, MINE)
    _local_failure(status, body, errno.errorcode[code], record_dir / "mine.yaml")
    assert _cassettes(record_dir) == []


def test_the_buggy_client_still_gets_the_upstreams_reply(proxy, record_dir, upstream, caplog):
    """The upstream answered: a client following its reply gets it whole; the log says what failed."""
    (record_dir / "mine.yaml").mkdir()
    direct = call(upstream.url, "POST", "/v1/responses", REQUEST)
    with caplog.at_level(logging.WARNING, logger="mockllama"):
        status, _, body = call(proxy.url, "POST", "/buggy/v1/responses", REQUEST, MINE)
        assert (status, body) == (direct[0], direct[2])
        _settle(proxy)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "EISDIR" in logged and str(record_dir / "mine.yaml") in logged and "cannot reach" not in logged


def test_when_only_provenance_fails_the_recording_is_kept_served_and_said_to_be(proxy, record_dir, caplog):
    (record_dir / "provenance.json").mkdir()
    with caplog.at_level(logging.WARNING, logger="mockllama"):
        status, headers, body = call(proxy.url, "POST", "/fixed/v1/responses", REQUEST, MINE)
    assert status == 200 and json.loads(body)["status"] == "incomplete"
    assert [i.path for i in load_cassette(record_dir / "mine.yaml").interactions] == [
        "/v1/responses",
        "/v1/chat/completions",
    ]
    again = call(proxy.url, "POST", "/fixed/v1/responses", REQUEST, MINE)
    assert (again[0], again[1]["X-Mockllama-Selected-By"], again[2]) == (200, "header", body)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert str(record_dir / "provenance.json") in logged and "EISDIR" in logged
    assert "nothing was recorded" not in logged.lower() and "cannot reach" not in logged


# --- made for real, in a process of its own ---------------------------------------------------------


def _in_a_process(tmp_path, upstream_url: str, record_to: Path, wrapper=(), preexec_fn=None):
    """A fixed client's miss through `mockllama serve --upstream` in a process of its own: (status, body, log)."""
    log = tmp_path / "serve.log"
    args = ["--upstream", upstream_url, "--record-to", str(record_to)]
    with serve_process(args, log, wrapper=list(wrapper), preexec_fn=preexec_fn) as (_, url):
        status, _, body = call(url, "POST", "/fixed/v1/responses", REQUEST, MINE)
    return status, body, log.read_text()


def _file_size_limit(size: int):
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def test_a_file_size_limit_is_a_500_naming_it_and_efbig(tmp_path, record_dir):
    with BackgroundServer(answering_responses_with(grown_reply(512 * 1024))) as up:
        status, body, log = _in_a_process(tmp_path, up.url, record_dir, preexec_fn=_file_size_limit(256 * 1024))
    _local_failure(status, body, "EFBIG", record_dir / "mine.yaml")
    assert "EFBIG" in log and "cannot reach" not in log
    assert _cassettes(record_dir) == []


def _namespace_mount(target: Path, options: str) -> list[str]:
    """A wrapper that mounts a tmpfs with ``options`` at ``target`` in a user and mount namespace of
    the process's own, then runs the command. Skips where this machine cannot make one."""
    unshare = shutil.which("unshare")
    probe = [unshare or "unshare", "--user", "--map-root-user", "--mount", "true"]
    if unshare is None or subprocess.run(probe, capture_output=True).returncode != 0:
        pytest.skip("unshare cannot make a user and mount namespace here")
    script = f'mount -t tmpfs -o {options} tmpfs "{target}" && exec "$@"'
    return [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh"]


def test_a_read_only_file_system_is_a_500_naming_it_and_erofs(tmp_path, upstream, record_dir):
    status, body, log = _in_a_process(tmp_path, upstream.url, record_dir, _namespace_mount(record_dir, "ro"))
    _local_failure(status, body, "EROFS", record_dir)
    assert "EROFS" in log and "cannot reach" not in log


def test_a_full_file_system_is_a_500_naming_it_and_enospc(tmp_path, record_dir):
    with BackgroundServer(answering_responses_with(grown_reply(512 * 1024))) as up:
        status, body, log = _in_a_process(tmp_path, up.url, record_dir, _namespace_mount(record_dir, "size=128k"))
    _local_failure(status, body, "ENOSPC", record_dir)
    assert "ENOSPC" in log and "cannot reach" not in log
