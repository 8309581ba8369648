"""`mockllama serve` binds loopback by default: the bound address itself, read from the kernel.

Connecting to 127.0.0.1 proves nothing (a server on 0.0.0.0 accepts that too), so these tests
read the listening socket's local address from /proc/net/tcp and /proc/net/tcp6 (Linux, where
CI runs).
"""

from __future__ import annotations

import ipaddress
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

MOCKLLAMA = [sys.executable, "-m", "mockllama"]
PROC_TABLES = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
LISTEN = "0A"


def _address(hex_address: str) -> str:
    """/proc/net/tcp writes addresses as host-order 32-bit words in hex."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def listening_addresses(port: int) -> set[str]:
    found = set()
    for table in PROC_TABLES:
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            address, _, hex_port = fields[1].partition(":")
            if fields[3] == LISTEN and int(hex_port, 16) == port:
                found.add(_address(address))
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_and_look(*args: str) -> tuple[set[str], str, str]:
    """Start `mockllama serve`, read its listening addresses, stop it with Ctrl-C."""
    port = _free_port()
    process = subprocess.Popen(
        [*MOCKLLAMA, "serve", "--port", str(port), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        while not listening_addresses(port):
            assert process.poll() is None and time.monotonic() < deadline, "mockllama serve did not listen"
            time.sleep(0.05)
        addresses = listening_addresses(port)
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    return addresses, out, err


@pytest.fixture(autouse=True)
def _needs_proc_net():
    assert any(table.exists() for table in PROC_TABLES), "these tests read /proc/net/tcp (Linux)"


def test_the_default_bind_is_loopback_only_and_silent():
    addresses, out, err = _serve_and_look()
    assert addresses == {"127.0.0.1"}
    assert "warning" not in err.lower() and "not loopback" not in err
    assert "http://127.0.0.1:" in out


def test_the_reader_sees_a_wildcard_bind_and_serve_warns():
    """The check above has teeth: a bind to every address shows as 0.0.0.0, with the warning."""
    addresses, _, err = _serve_and_look("--host", "0.0.0.0")
    assert addresses == {"0.0.0.0"}
    assert "warning: binding 0.0.0.0, which is not loopback" in err
