"""CORS as llama-server answers it, so that a page on another origin can use mockllama.

llama-server b11434 (checked live in ``tests/live/test_live_cors.py``):
- answers ``OPTIONS`` on any path with a 200 preflight: the request's ``Origin`` allowed, with
  credentials, methods and any header;
- puts ``Access-Control-Allow-Origin: <the request's Origin>`` on every other reply, errors
  included (an empty value when the request sent no ``Origin``).

``serve --cors-origin ORIGIN`` (repeatable) restricts this to the origins named: a preflight from
any other origin gets a 403, and so does every other request that says it comes from one, before
anything is done for it. Withholding ``Access-Control-Allow-Origin`` only keeps the reply from the
page; a "simple" request (a POST of ``text/plain``, which needs no preflight) would still be
served, journalled, and, under ``serve --upstream``, sent upstream with its credentials and
recorded. A request without ``Origin`` (curl, SDKs, tests) is not a browser's, and is answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web
from multidict import istr

from mockllama.wire.errors import RequestError, error_body

# istr: set and looked up on every reply, so folded once here (server.app says why): 1,100
# instructions a reply.
ALLOW_ORIGIN = istr("Access-Control-Allow-Origin")
ORIGIN = istr("Origin")
# What llama-server adds to a preflight beside the allowed origin, in its order.
PREFLIGHT_HEADERS = (
    ("Access-Control-Allow-Credentials", "true"),
    ("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"),
    ("Access-Control-Allow-Headers", "*"),
)


@dataclass(frozen=True)
class CorsPolicy:
    origins: frozenset[str] = frozenset()  # empty: every origin, as llama-server

    def allows(self, origin: str | None) -> bool:
        return not self.origins or origin is None or origin in self.origins


CORS = web.AppKey("cors", CorsPolicy)


def not_allowed(policy: CorsPolicy, origin: str) -> str:
    allowed = ", ".join(sorted(policy.origins))
    return (
        f"mockllama: the origin {origin!r} is not allowed; this server allows {allowed} "
        f"(serve --cors-origin ORIGIN, repeatable)."
    )


async def preflight(request: web.Request) -> web.Response:
    """An ``OPTIONS`` request on any path: llama-server's preflight answer (``origin_setter`` adds the
    origin), or a RequestError for an origin ``--cors-origin`` leaves out."""
    policy = request.app[CORS]
    origin = request.headers.get(ORIGIN)
    if not policy.allows(origin):
        raise RequestError(403, not_allowed(policy, origin))
    return web.Response(status=200, headers=PREFLIGHT_HEADERS, content_type="text/html")


def refusing_middleware(policy: CorsPolicy):
    """With ``--cors-origin``: a request from another origin gets a 403 before any handler runs
    (the preflight route answers its own). A middleware, so that the default, any origin, costs
    nothing on the hot path: it is installed only when origins are named."""

    @web.middleware
    async def refuse_other_origins(request: web.Request, handler):
        origin = request.headers.get(ORIGIN)
        if policy.allows(origin) or request.method == "OPTIONS":
            return await handler(request)
        # The X-Mockllama-* headers mark it as mockllama's own reply, in llama-server's shape.
        return web.Response(
            status=403,
            body=error_body(403, not_allowed(policy, origin)),
            content_type="application/json",
            headers={"X-Mockllama-Behaviour": "none", "X-Mockllama-Scenario": "none"},
        )

    return refuse_other_origins


def origin_setter(policy: CorsPolicy):
    """What gives every reply, just before its headers go out, the allowed origin as llama-server
    sends it (the app's one ``on_response_prepare`` hook calls it). It replaces the recorded value
    (the recording client sent no Origin). Built for one policy, so the hot path does no lookup
    beyond the header."""
    if not policy.origins:

        def any_origin(request: web.Request, response: web.StreamResponse) -> None:
            response.headers[ALLOW_ORIGIN] = request.headers.get(ORIGIN, "")

        return any_origin

    def named_origins(request: web.Request, response: web.StreamResponse) -> None:
        origin = request.headers.get(ORIGIN)
        if policy.allows(origin):
            response.headers[ALLOW_ORIGIN] = origin or ""
        else:
            response.headers.popall(ALLOW_ORIGIN, None)

    return named_origins


def check_origin(origin: str) -> str:
    """``origin`` if it is written as a browser sends it in ``Origin``, else a ValueError that says how."""
    parts = urlsplit(origin)
    if origin == "null" or (
        parts.scheme in ("http", "https") and parts.netloc and not parts.path and not parts.query and not parts.fragment
    ):
        return origin
    raise ValueError(
        f"{origin!r} is not an origin: write it as a browser sends it, scheme://host[:port] "
        f"with no path, for example http://localhost:5173"
    )


def install(app: web.Application, origins=()):
    """Give ``app`` llama-server's CORS; ``origins`` (empty: any) restricts it. Returns what sets a
    reply's allowed origin, for the app's ``on_response_prepare`` hook to call."""
    app[CORS] = CorsPolicy(frozenset(check_origin(origin) for origin in origins))
    if app[CORS].origins:
        app.middlewares.append(refusing_middleware(app[CORS]))
    return origin_setter(app[CORS])
