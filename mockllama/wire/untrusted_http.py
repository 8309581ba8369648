"""One HTTP exchange with a server mockllama does not trust: ``check``'s server under test, the
journal ``explain --journal`` reads.

One deadline for the whole exchange, from connecting to the last byte, so a server that drips a
byte at a time or never stops is cut off all the same; a cap on the reply's size; a
``user:password`` in the URL sent as Basic auth and its ``?query`` on every request, as curl
does, and neither ever printed. Anything that is not a complete reply raises ``ExchangeFailed``
with a one-line reason.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import socket
import time
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from mockllama.wire.scrub import REDACTED, is_secret_header, scrub_text

MAX_REPLY_BYTES = 8 * 1024 * 1024


class ExchangeFailed(Exception):
    """No complete HTTP reply: unreachable, a timeout, too large, malformed. The message is one
    line and names no credential."""


# --- Where to send: a base URL, what is sent and what may be printed ---


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be used, or None. The message never repeats a password the URL holds."""
    shown = repr(scrub_text(url))
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port out of range)
    except ValueError as err:
        return f"{shown} is not a usable URL ({err})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{shown} is not an http:// or https:// URL with a host; write e.g. http://127.0.0.1:8080"
    return None


def _shown_query(query: str) -> str:
    """The query with the value of each parameter named like a secret (key, token, ...) hidden."""
    pairs = parse_qsl(query, keep_blank_values=True)
    return urlencode([(name, REDACTED if is_secret_header(name) else value) for name, value in pairs])


@dataclass(frozen=True)
class Target:
    """A server's base URL: a user:password in it is sent as Basic auth and
    its ``?query`` on every request, as curl does; ``shown`` is the URL with both kept safe to
    print. A trailing ``/v1`` is dropped: the probes add it."""

    scheme: str
    host: str
    port: int | None
    prefix: str
    query: str
    authorization: str | None
    shown: str

    @classmethod
    def parse(cls, url: str) -> Target:
        """Raises ValueError (its message safe to print) for a URL that ``url_problem`` refuses."""
        problem = url_problem(url)
        if problem:
            raise ValueError(problem)
        parts = urlsplit(url)
        assert parts.hostname is not None  # url_problem refuses a URL without a host
        prefix = parts.path.rstrip("/").removesuffix("/v1").rstrip("/")
        authorization = None
        if parts.username or parts.password:
            pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            authorization = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
        shown = f"{parts.scheme}://{REDACTED + '@' if authorization else ''}{parts.netloc.rpartition('@')[2]}{prefix}"
        if parts.query:
            shown += ("" if prefix else "/") + "?" + _shown_query(parts.query)
        return cls(parts.scheme, parts.hostname, parts.port, prefix, parts.query, authorization, scrub_text(shown))

    def path(self, path: str) -> str:
        """The request target for ``path`` (e.g. /v1/responses) under this base URL."""
        return self.prefix + path + (f"?{self.query}" if self.query else "")


# --- Reading a reply: one deadline for the whole exchange, a cap on its size ---


class _DeadlineReader(io.RawIOBase):
    """A socket's reads, each given only what is left of one deadline, and capped in total, so
    that a server that drips a byte at a time or streams forever is cut off all the same."""

    def __init__(self, sock: socket.socket, deadline: float, cap: int):
        super().__init__()
        self.sock, self.deadline, self.cap, self.total = sock, deadline, cap, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline passed")
        self.sock.settimeout(remaining)
        count = self.sock.recv_into(buffer)
        self.total += count
        if self.total > self.cap:
            raise _TooLarge()
        return count


class _TooLarge(Exception):
    pass


class _DeadlineSocket:
    """What http.client needs of a socket (sendall, makefile, close), under one deadline."""

    def __init__(self, sock: socket.socket, deadline: float, cap: int):
        self.sock, self.deadline, self.cap = sock, deadline, cap

    def sendall(self, data) -> None:
        self.sock.settimeout(max(self.deadline - time.monotonic(), 0.001))
        self.sock.sendall(data)

    def makefile(self, mode: str, *args, **kwargs):
        return io.BufferedReader(_DeadlineReader(self.sock, self.deadline, self.cap))

    def close(self) -> None:
        # http.client "closes" the connection as soon as it sees `Connection: close` (llama-server
        # answers it to fetch's own), before the body is read: the socket must stay open for the
        # response, which reads through makefile(). fetch() closes the real socket when done.
        pass


class Reply(NamedTuple):
    status: int
    headers: http.client.HTTPMessage
    body: bytes


def fetch(
    target: Target,
    method: str,
    path: str,
    body: dict | None = None,
    *,
    timeout: float,
    deadline: float | None = None,
    max_bytes: int | None = None,
) -> Reply:
    """One request; the whole exchange (connect, send, headers, body) has ``timeout`` seconds and
    reads at most ``max_bytes`` (default MAX_REPLY_BYTES). Anything that is not a complete HTTP
    reply raises ExchangeFailed, with a one-line reason that names no credential.

    A caller making several requests under one budget of ``timeout`` seconds passes the budget's
    end as ``deadline`` (a time.monotonic() value): the exchange stops there, and a timeout still
    names the whole budget the user gave, not the fraction of it that was left."""
    max_bytes = MAX_REPLY_BYTES if max_bytes is None else max_bytes
    connection_class = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
    if deadline is None:
        deadline = time.monotonic() + timeout
    connection = connection_class(target.host, target.port, timeout=max(deadline - time.monotonic(), 0.001))
    request_target = target.path(path)
    shown = f"{method} {target.prefix + path}"
    # One connection a request, so say so: the server need not hold it open (llama-server then
    # answers `Connection: close`, which http.client acts on before the body is read).
    headers = {"Connection": "close", **({"Content-Type": "application/json"} if body is not None else {})}
    if target.authorization:
        headers["Authorization"] = target.authorization
    raw = None
    try:
        connection.connect()
        raw = connection.sock
        connection.sock = _DeadlineSocket(raw, deadline, max_bytes)
        connection.request(method, request_target, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        payload = response.read()
    except TimeoutError:  # socket.timeout is TimeoutError
        raise ExchangeFailed(f"no complete answer from {shown} within {timeout:g} s") from None
    except _TooLarge:
        raise ExchangeFailed(f"{shown} answered more than {max_bytes} bytes; stopped reading") from None
    except http.client.HTTPException as err:
        what = type(err).__name__
        detail = " ".join(str(err).split())[:120]
        raise ExchangeFailed(f"{shown} answered malformed HTTP ({what}{': ' + detail if detail else ''})") from None
    except OSError as err:
        raise ExchangeFailed(f"cannot reach {target.shown} ({err.strerror or err})") from None
    finally:
        connection.close()
        if raw is not None:
            raw.close()
    return Reply(response.status, response.headers, payload)
