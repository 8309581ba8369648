"""An unpaced stream: its TCP socket corked while its head and blocks are written, every block its
own chunk, all but the first in one write; an HTTP/1.0 client gets them unframed."""

from __future__ import annotations

import socket

import pytest

from mockllama.server.corking import corked

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


# --- an unpaced stream: every block its own chunk, all after the first in one write ----------------


def _streamed(scenarios, name: str):
    return scenarios[name].find("POST", "/v1/responses", True)


def test_an_unpaced_stream_is_one_chunk_per_block_and_one_write_after_the_first(server, scenarios, monkeypatch):
    from asyncio import selector_events

    from support.httpkit import chunks, raw_reply, request_bytes

    writes, corked_at = [], []
    original = selector_events._SelectorSocketTransport.write

    def counted(transport, data):
        writes.append(bytes(data))
        corked_at.append(_cork(transport.get_extra_info("socket")))
        return original(transport, data)

    monkeypatch.setattr(selector_events._SelectorSocketTransport, "write", counted)
    interaction = _streamed(scenarios, "poem-finishes")
    reply = raw_reply(server.url, "/buggy/v1/responses", request_bytes(interaction))
    monkeypatch.undo()
    blocks = [event.raw for event in interaction.events]
    assert len(blocks) > 40
    assert b"transfer-encoding: chunked" in reply.partition(b"\r\n\r\n")[0].lower()
    assert chunks(reply.partition(b"\r\n\r\n")[2]) == blocks  # one chunk per recorded block, in order
    # the head and the first block (one write or two, as aiohttp sends them), every other block in one
    # write, framed as aiohttp frames each, then the last chunk: not one write per block
    framed = b"".join(b"%x\r\n%s\r\n" % (len(block), block) for block in blocks[1:])
    assert framed in writes and writes[-1] == b"0\r\n\r\n" and len(writes) <= 4, [len(w) for w in writes]
    assert writes[0].startswith(b"HTTP/1.1 200")
    # the head and every block leave together when the socket is uncorked; the last chunk follows
    # once the handler has returned
    assert corked_at[:-1] == [1] * (len(writes) - 1) and corked_at[-1] == 0, corked_at


def test_an_http_1_0_client_gets_the_blocks_unframed_until_the_connection_closes(server, scenarios):
    from support.httpkit import raw_reply, request_bytes

    interaction = _streamed(scenarios, "poem-finishes")
    reply = raw_reply(server.url, "/buggy/v1/responses", request_bytes(interaction), version="HTTP/1.0")
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") and b"transfer-encoding" not in head.lower()
    assert body == b"".join(event.raw for event in interaction.events)
