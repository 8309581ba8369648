"""Raw HTTP helpers for byte-level checks, next to the real openai SDK used elsewhere."""

from __future__ import annotations

import http.client
import json
import socket
from urllib.parse import urlsplit

from benchmarks.peers import chunks
from mockllama.recordings.cassettes import Interaction


def request_bytes(interaction: Interaction) -> bytes:
    """The recorded request body, as a client would send it."""
    if interaction.request_raw is not None:
        return interaction.request_raw
    if interaction.request_json is None:
        return b""
    return json.dumps(interaction.request_json).encode("utf-8")


def call(url: str, method: str, path: str, body: bytes = b"", headers: dict | None = None):
    """One request on a fresh connection: (status, headers, body bytes)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        sent_headers = {"Content-Type": "application/json", **(headers or {})}
        connection.request(method, path, body=body if method != "GET" else None, headers=sent_headers)
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def post_json(url: str, path: str, payload, headers: dict | None = None):
    status, response_headers, body = call(url, "POST", path, json.dumps(payload).encode(), headers)
    return status, response_headers, body


def raw_reply(url: str, path: str, body: bytes, headers: dict | None = None, version: str = "HTTP/1.1") -> bytes:
    """A POST written by hand on a fresh socket, and every byte that came back until it closed."""
    parts = urlsplit(url)
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    head = (
        f"POST {path} {version}\r\nHost: {parts.hostname}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n{extra}\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(head + body)
        data = b""
        while piece := sock.recv(65536):
            data += piece
    return data


def chunks_on_the_wire(url: str, path: str, body: bytes, headers: dict | None = None) -> list[bytes]:
    """The HTTP/1.1 chunks of a streamed reply, as the server framed them on the socket."""
    return chunks(raw_reply(url, path, body, headers).partition(b"\r\n\r\n")[2])


def sse_pairs(body: bytes) -> list[tuple[str | None, object]]:
    """(event name, parsed data) for each block of a stream body."""
    pairs = []
    for block in body.decode("utf-8").split("\n\n"):
        if not block.strip():
            continue
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data.append(line[len("data: ") :])
        text = "\n".join(data)
        try:
            pairs.append((name, json.loads(text)))
        except ValueError:
            pairs.append((name, text))
    return pairs


def chosen_reply(url: str, behaviour: str, scenario, path: str, stream: bool = False) -> bytes:
    """What ``behaviour`` sends for ``scenario``'s recorded request on ``path`` (the scenario chosen by
    header): the body of a 200, to hold what a client reported against what the server sent."""
    recorded = scenario.find("POST", path, stream)
    status, _, body = call(
        url, "POST", f"/{behaviour}{path}", request_bytes(recorded), {"X-Mockllama-Scenario": scenario.name}
    )
    assert status == 200, (behaviour, scenario.name, path, body[:200])
    return body
