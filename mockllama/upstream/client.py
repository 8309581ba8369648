"""The upstream llama-server that a miss is forwarded to: its address, its HTTP session, its errors.

The address given may carry credentials (``http://user:password@host:8080``). They are sent to the
upstream as Basic auth and kept out of everything else: the address mockllama prints, records,
logs and names in errors is the one without them.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from mockllama.wire.errors import RequestError
from mockllama.wire.headers import HOP_BY_HOP
from mockllama.wire.scrub import is_secret_header, scrub_header_value

DEFAULT_TIMEOUT = 300.0
# Not forwarded: hop-by-hop headers (RFC 9110 section 7.6.1, and those the client's Connection
# names), the ones aiohttp computes, and mockllama's own. Nor Origin: the upstream is reached by
# mockllama, not by the page, and only --cors-origin judges the page.
NOT_FORWARDED = frozenset(
    {
        "connection",
        "content-length",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "accept-encoding",
        "origin",
        "proxy-authorization",
        "proxy-authenticate",
        "expect",
    }
)


@dataclass(frozen=True)
class Upstream:
    url: str  # without credentials, without a trailing slash: safe to print and to record
    authorization: str | None = field(default=None, repr=False)  # "Basic ..." from the URL's credentials
    timeout: float = DEFAULT_TIMEOUT


def parse_upstream(address: str, timeout: float = DEFAULT_TIMEOUT) -> Upstream:
    """``http://user:pw@host:8080/`` -> Upstream("http://host:8080", BasicAuth(user, pw)).

    Error messages never repeat the address, which may hold a password."""
    try:
        url = URL(address.strip())
    except (TypeError, ValueError):
        raise ValueError(
            "the upstream is not a URL; give the llama-server's base URL, e.g. http://127.0.0.1:8080"
        ) from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError("the upstream must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8080")
    if url.path.rstrip("/").endswith("/v1"):
        raise ValueError("give the upstream's base URL without /v1, e.g. http://127.0.0.1:8080")
    if url.query_string or url.fragment:
        # Dropping it silently would send a request the upstream refuses, and record that refusal.
        raise ValueError(
            "the upstream URL must not have a query or fragment (not repeated here: it may hold a key); "
            "llama-server reads its key only from a header. Let your client send it (Authorization and "
            "X-Api-Key are forwarded, never written), or write it as http://user:password@host:port"
        )
    authorization = None
    if url.user or url.password:
        pair = f"{url.user or ''}:{url.password or ''}".encode()
        authorization = "Basic " + base64.b64encode(pair).decode("ascii")
    clean = url.with_user(None)
    return Upstream(str(clean).rstrip("/"), authorization, timeout)


def open_session(upstream: Upstream) -> aiohttp.ClientSession:
    # llama-server answers "Connection: close"; a reused connection fails on the next request.
    # sock_read bounds each wait for bytes, so a long stream is fine while tokens keep coming.
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(force_close=True),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=upstream.timeout),
        auto_decompress=False,
    )


def forwarded_headers(headers, upstream: Upstream) -> CIMultiDict:
    """The client's headers (a mapping, or (name, value) pairs) as the upstream should get them.
    Credentials in the upstream URL replace the client's Authorization; nothing here is ever
    written to disk."""
    pairs = list(headers.items() if hasattr(headers, "items") else headers)
    named = {
        token.strip().lower() for name, value in pairs if name.lower() == "connection" for token in value.split(",")
    }
    kept = CIMultiDict(
        (name, value)
        for name, value in pairs
        if name.lower() not in NOT_FORWARDED | named and not name.lower().startswith("x-mockllama-")
    )
    kept["Accept-Encoding"] = "identity"  # what is recorded is what was sent, uncompressed
    if upstream.authorization is not None:
        kept["Authorization"] = upstream.authorization
    return kept


def unreachable(upstream: Upstream, err: BaseException) -> RequestError:
    if isinstance(err, asyncio.TimeoutError):  # the builtin TimeoutError only from Python 3.11
        return RequestError(
            504,
            f"mockllama: the upstream llama-server at {upstream.url} did not answer within {upstream.timeout:g} s; "
            "nothing was recorded. Raise serve --upstream-timeout, or check the server.",
        )
    reason = " ".join(str(err).split()) or type(err).__name__
    return RequestError(
        502,
        f"mockllama: cannot reach the upstream llama-server at {upstream.url} ({reason}); nothing was recorded. "
        "Start it, or replay only with --record-mode none.",
    )


UPSTREAM_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError, OSError)


def reply_headers(headers) -> list[tuple[str, str]]:
    """The upstream's reply headers as a replay of its recording would send them: scrubbed as
    ``record`` scrubs what it writes."""
    return [
        (name, scrub_header_value(name, value))
        for name, value in headers.items()
        if name.lower() not in HOP_BY_HOP and not is_secret_header(name)
    ]
