"""An unpaced stream's TCP socket is corked while its blocks are written, and uncorked after."""

from __future__ import annotations

import socket

import pytest

from mockllama.corking import corked

pytestmark = pytest.mark.skipif(not hasattr(socket, "TCP_CORK"), reason="TCP_CORK is Linux's")


class _Transport:
    def __init__(self, sock):
        self._sock = sock

    def get_extra_info(self, name):
        return self._sock if name == "socket" else None


class _Request:
    def __init__(self, sock):
        self.transport = _Transport(sock)


def _cork(sock) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CORK)


def test_the_socket_is_corked_inside_and_uncorked_after_even_on_an_error():
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()) as client:
        assert _cork(client) == 0
        with corked(_Request(client)):
            assert _cork(client) == 1
        assert _cork(client) == 0
        with pytest.raises(ConnectionResetError), corked(_Request(client)):
            raise ConnectionResetError
        assert _cork(client) == 0


def test_a_request_without_a_tcp_socket_passes_through():
    left, right = socket.socketpair()
    with left, right:
        with corked(_Request(left)), corked(_Request(None)):
            left.sendall(b"x")
        assert right.recv(1) == b"x"
