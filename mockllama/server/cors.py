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

mockllama's own routes, ``/_mockllama/*`` (the journal holds what every client sent, and ``DELETE``
clears it), are not llama-server's and are not shared with any origin: they carry
``Access-Control-Allow-Origin`` only for an origin ``--cors-origin`` names, and a request from any
other page (one whose ``Origin`` is not the server's own, or that the browser marks
``Sec-Fetch-Site: cross-site``) gets a 403 before anything is done for it, preflight included.

Fetch Metadata (``Sec-Fetch-Site``) also covers what ``Origin`` cannot: a page's ``<img>`` or
``<script>`` sends a "no-cors" GET with no ``Origin`` at all. ``refuse_cross_site`` is the
resource-isolation check for what a request would reach beyond the recordings (``serve
--upstream`` forwards a miss with the URL's credentials and records the reply).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web
from multidict import istr

from mockllama.wire.errors import RequestError, error_body

# istr: set and looked up on every reply, so folded once here (server.app says why).
ALLOW_ORIGIN = istr("Access-Control-Allow-Origin")
ORIGIN = istr("Origin")
FETCH_SITE = istr("Sec-Fetch-Site")
# mockllama's own routes (the journal, the teaching page's data): shared with no origin by default.
OWN_PREFIX = "/_mockllama/"
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

    def names(self, origin: str | None) -> bool:
        """Whether ``--cors-origin`` names this origin: only then may a page on it use more than the recordings."""
        return origin in self.origins


CORS = web.AppKey("cors", CorsPolicy)


def not_allowed(policy: CorsPolicy, origin: str | None) -> str:
    allowed = ", ".join(sorted(policy.origins))
    return (
        f"mockllama: the origin {origin!r} is not allowed; this server allows {allowed} "
        f"(serve --cors-origin ORIGIN, repeatable)."
    )


async def preflight(request: web.Request) -> web.Response:
    """An ``OPTIONS`` request on any path: llama-server's preflight answer (``origin_setter`` adds the
    origin), or a RequestError for an origin ``--cors-origin`` leaves out, and on mockllama's own
    routes for any origin it does not name."""
    policy = request.app[CORS]
    origin = request.headers.get(ORIGIN)
    if not policy.allows(origin):
        raise RequestError(403, not_allowed(policy, origin))
    if request.path.startswith(OWN_PREFIX):
        refusal = own_route_refusal(request)
        if refusal:
            raise RequestError(403, refusal)
    return web.Response(status=200, headers=PREFLIGHT_HEADERS, content_type="text/html")


def _cross_site(request: web.Request, policy: CorsPolicy) -> bool:
    """Fetch Metadata's resource isolation: the browser says a page on another site sent this, and
    ``--cors-origin`` does not name the page's origin. Browsers that send no ``Sec-Fetch-Site`` (and
    every client that is not a browser) are not refused by it."""
    return request.headers.get(FETCH_SITE) == "cross-site" and not policy.names(request.headers.get(ORIGIN))


def refuse_cross_site(request: web.Request, doing: str) -> None:
    """A RequestError (403) for a cross-site request whose origin ``--cors-origin`` does not name;
    ``doing`` says what answering it would do. A no-cors GET (an ``<img>``) sends no ``Origin``
    and is refused too."""
    policy = request.app[CORS]
    if _cross_site(request, policy):
        origin = request.headers.get(ORIGIN)
        page = f"the origin {origin!r}" if origin else "a page that sent no Origin"
        raise RequestError(
            403,
            f"mockllama: refused a cross-site request (Sec-Fetch-Site: cross-site) from {page}, which would "
            f"{doing}. Name the page's origin with serve --cors-origin ORIGIN to allow it.",
        )


def _own_origin(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}".lower()


def own_route_refusal(request: web.Request) -> str | None:
    """Why a request may not use mockllama's own routes, or None: a page may, if ``--cors-origin``
    names its origin or it is the server's own page (the teaching page); a request that is no
    page's (no ``Origin``, no cross-site mark: curl, ``explain --journal``, tests) may too."""
    policy = request.app[CORS]
    origin = request.headers.get(ORIGIN)
    if policy.names(origin):
        return None
    if _cross_site(request, policy) or (origin is not None and origin.lower() != _own_origin(request)):
        shown = f"the origin {origin!r}" if origin else "a cross-site page that sent no Origin"
        return (
            f"mockllama: {request.path} is mockllama's own route, shared with no other origin; {shown} "
            "may not use it. Name the page's origin with serve --cors-origin ORIGIN to allow it."
        )
    return None


def own_route(handler):
    """``handler`` (of a path under ``/_mockllama/``) answered only for a request
    ``own_route_refusal`` lets through: the journal can be neither read nor cleared by a page on
    another origin, even one whose reply it could not read (a no-cors GET, a DELETE sent blind)."""

    async def guarded(request: web.Request) -> web.StreamResponse:
        refusal = own_route_refusal(request)
        if refusal is None:
            return await handler(request)
        return refused(refusal)

    return guarded


def refused(message: str) -> web.Response:
    """A 403 of mockllama's own, in llama-server's shape; the X-Mockllama-* headers mark it as one."""
    return web.Response(
        status=403,
        body=error_body(403, message),
        content_type="application/json",
        headers={"X-Mockllama-Behaviour": "none", "X-Mockllama-Scenario": "none"},
    )


def refusing_middleware(policy: CorsPolicy):
    """With ``--cors-origin``: a request from another origin gets a 403 before any handler runs
    (the preflight route answers its own). A middleware, so that the default, any origin, costs
    nothing on the hot path: it is installed only when origins are named."""

    @web.middleware
    async def refuse_other_origins(request: web.Request, handler):
        origin = request.headers.get(ORIGIN)
        if policy.allows(origin) or request.method == "OPTIONS":
            return await handler(request)
        return refused(not_allowed(policy, origin))

    return refuse_other_origins


def origin_setter(policy: CorsPolicy):
    """What gives every reply, just before its headers go out, the allowed origin as llama-server
    sends it (the app's one ``on_response_prepare`` hook calls it). It replaces the recorded value
    (the recording client sent no Origin). Built for one policy, so the hot path does no lookup
    beyond the header."""
    if not policy.origins:

        def any_origin(request: web.Request, response: web.StreamResponse) -> None:
            if request.path.startswith(OWN_PREFIX):  # shared with no origin: none is named
                response.headers.popall(ALLOW_ORIGIN, None)
            else:
                response.headers[ALLOW_ORIGIN] = request.headers.get(ORIGIN, "")

        return any_origin

    def named_origins(request: web.Request, response: web.StreamResponse) -> None:
        origin = request.headers.get(ORIGIN)
        if policy.names(origin) or (policy.allows(origin) and not request.path.startswith(OWN_PREFIX)):
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
