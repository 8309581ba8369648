"""The aiohttp app: routes, behaviour selection, error replies and the reply writer.

A request flows one way: route -> behaviour and scenario selection -> matched interaction ->
behaviour transform -> writer.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields
from functools import lru_cache

from aiohttp import HttpVersion10, HttpVersion11, web
from multidict import CIMultiDict, CIMultiDictProxy, istr

from mockllama.behaviours.registry import BEHAVIOURS
from mockllama.behaviours.replay import reply_to
from mockllama.matching.matcher import Matcher, Selection, served_setup
from mockllama.recordings.cassettes import Scenario
from mockllama.server import cors
from mockllama.server.aiohttp_private import reshape_prepared
from mockllama.server.faults import FAULT_HEADER, FAULT_PLAN, FaultPlan
from mockllama.server.journal import JOURNAL, TRACE, Journal, Trace, journal_route, trace_of
from mockllama.server.limits import quiet_accept_errors
from mockllama.server.option_fields import blame
from mockllama.server.options import ReplayOptions
from mockllama.server.outgoing import Outgoing
from mockllama.server.steps.registry import made_steps
from mockllama.server.steps.step import Answer, Step
from mockllama.server.stopping import STOPPING, Stopping
from mockllama.server.warming import nearest_prepared_soon
from mockllama.server.writer import plain_reply, send
from mockllama.wire.errors import RequestError, error_body
from mockllama.wire.headers import HOP_BY_HOP, UNSENDABLE_IN_A_HEADER
from mockllama.wire.nesting import refuse_deep_nesting
from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH, RESPONSES_PATH

log = logging.getLogger("mockllama")

POST_ROUTES = (RESPONSES_PATH, CHAT_PATH, MESSAGES_PATH)
GET_ROUTES = ("/health", "/v1/models", "/props")

# istr: a header name with its case-folded form made once, so that looking it up in a request's
# headers, on every request, does not fold it again.
BEHAVIOUR_HEADER = istr("X-Mockllama-Behaviour")
SCENARIO_HEADER = istr("X-Mockllama-Scenario")
TURN_HEADER = istr("X-Mockllama-Turn")  # which turn of the scenario answered (1 unless a conversation)


@dataclass(frozen=True, kw_only=True)
class Settings(ReplayOptions):
    """What the server runs with: its options, and the recordings it serves with their matcher. The
    options are plain attributes, as the request path reads some of them on every request."""

    scenarios: dict[str, Scenario]
    matcher: Matcher

    @classmethod
    def of(cls, options: ReplayOptions, scenarios: dict[str, Scenario], matcher: Matcher) -> Settings:
        given = {f.name: getattr(options, f.name) for f in fields(ReplayOptions)}
        return cls(**given, scenarios=scenarios, matcher=matcher)


SETTINGS = web.AppKey("settings", Settings)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def mockllama_headers(behaviour: str, scenario: str) -> dict[str, str]:
    return {BEHAVIOUR_HEADER: behaviour, SCENARIO_HEADER: scenario}


def error_response(status: int, message: str, behaviour: str = "none", headers: dict | None = None) -> web.Response:
    return web.Response(
        status=status,
        body=error_body(status, message),
        content_type="application/json",
        headers={**mockllama_headers(behaviour, "none"), **(headers or {})},
    )


# The reply of last resort, built from constants, for when building an error reply fails too.
LAST_RESORT_500 = error_body(500, "mockllama: internal error; the server log has the details.")


def _aiohttp_error_message(request: web.Request, error: web.HTTPException) -> str:
    if error.status == 404:
        routes = ", ".join([f"POST {r}" for r in POST_ROUTES] + [f"GET {r}" for r in GET_ROUTES])
        prefixes = ", ".join(f"/{b}" for b in BEHAVIOURS)
        return (
            f"mockllama: no route {request.method} {request.path}. Routes: {routes}, "
            f"each also under the behaviour prefixes {prefixes}."
        )
    if error.status == 405:
        allowed = ", ".join(sorted(getattr(error, "allowed_methods", ()) or ()))
        return f"mockllama: {request.path} does not accept {request.method}; use {allowed}."
    if error.status == 413:
        limit = request.app[SETTINGS].max_body_bytes
        return f"mockllama: the request body is larger than the limit of {limit} bytes (serve --max-body-bytes)."
    return f"mockllama: {error.reason}"


def answers_errors(handler, journal: Journal | None = None):
    """Every failure becomes an error in llama-server's shape; no traceback reaches a client. With
    ``journal`` (the API routes'), the request gets its ``Trace``, every reply is journalled,
    error replies included, and a connection a fault cuts is closed only once its entry is in.

    A wrapper on each handler rather than an aiohttp middleware, whose machinery every request
    would pass through. One wrapper for the errors and the journal, not one each: each wrapper is a
    coroutine more on every request."""
    traced = journal is not None
    keeping = journal if journal is not None and journal.enabled else None  # fixed for the journal's life

    @functools.wraps(handler)
    async def guarded(request: web.Request) -> web.StreamResponse:
        if traced:
            trace = request[TRACE] = Trace()
        if request.method not in KNOWN_METHODS or not_http_1(request):
            response = _unknown_method(request)
        else:
            try:
                response = await handler(request)
            except web.HTTPException as err:
                if err.status < 400:
                    raise
                response = _error_reply(request, err)
            except Exception as err:  # RequestError included: _error_reply tells them apart
                response = _error_reply(request, err)
        if traced:
            if keeping is not None:
                keeping.keep(request, response, trace)
            if trace.drop_connection and request.transport is not None:
                # Only now, so that no client sees its connection drop before the journal has the entry.
                request.transport.close()
        return response

    return guarded


def _error_reply(request: web.Request, err: Exception) -> web.Response:
    """The error reply for ``err``; whatever goes wrong while building it, still a reply in llama-server's shape."""
    try:
        if isinstance(err, RequestError):
            return error_response(err.status, err.message, _behaviour_label(request))
        if isinstance(err, web.HTTPException):
            methods = getattr(err, "allowed_methods", None)
            # every path answers OPTIONS (a CORS preflight) too
            allow = {"Allow": ", ".join(sorted({*methods, "OPTIONS"}))} if methods else None
            return error_response(err.status, _aiohttp_error_message(request, err), _behaviour_label(request), allow)
        log.error("mockllama: internal error on %s %s", request.method, request.path, exc_info=err)
    except Exception as failure:  # one line, never a traceback per request
        log.error("mockllama: could not build the error reply for %s: %r", type(err).__name__, failure)
    return web.Response(
        status=500, body=LAST_RESORT_500, content_type="application/json", headers=mockllama_headers("none", "none")
    )


def host_name(host_header: str) -> str:
    """``Example.test:18090`` -> ``example.test``; ``[::1]:80`` -> ``[::1]``."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] or host
    return host.rpartition(":")[0] if ":" in host else host


def host_guard(allowed: frozenset[str]):
    """With --allowed-host, a request must name one of those hosts: a page that reaches the server
    under another name (DNS rebinding) gets a 403 before anything is done for it. A middleware
    installed only then, as cors.refusing_middleware, so that the default (any host, as
    llama-server) costs the hot path nothing. A method llama-server does not know still gets its
    400 first."""

    @web.middleware
    async def refuse_other_hosts(request: web.Request, handler):
        if (
            request.method not in KNOWN_METHODS
            or not_http_1(request)
            or host_name(request.headers.get("Host", "")) in allowed
        ):
            return await handler(request)
        message = (
            f"mockllama: the Host {request.headers.get('Host', '(none)')!r} is not allowed; "
            f"this server answers only {', '.join(sorted(allowed))} (serve --allowed-host)."
        )
        return _error_reply(request, RequestError(403, message))

    return refuse_other_hosts


def _behaviour_label(request: web.Request) -> str:
    """The behaviour an erroring request asked for, for its X-Mockllama-Behaviour header."""
    default = request.app[SETTINGS].behaviour
    try:
        return choose_behaviour(request.headers.get(BEHAVIOUR_HEADER), split_behaviour_prefix(request.path)[0], default)
    except RequestError:  # an unknown X-Mockllama-Behaviour: the error is about that very header
        return default


# What each kind of route accepts; HEAD is a GET without the body (aiohttp leaves the body out).
ALLOWED_METHODS = {"GET": ("GET", "HEAD"), "POST": ("POST",)}


def require_method(request: web.Request, method: str) -> None:
    """Routes take every method, so that a wrong one gets a 405 in llama-server's shape, with Allow."""
    allowed = ALLOWED_METHODS[method]
    if request.method not in allowed:
        raise web.HTTPMethodNotAllowed(request.method, allowed)


def split_behaviour_prefix(path: str) -> tuple[str | None, str]:
    """``/fixed/v1/responses`` -> ("fixed", "/v1/responses"); an unprefixed path -> (None, path)."""
    first, _, rest = path.lstrip("/").partition("/")
    if first in BEHAVIOURS:
        return first, "/" + rest
    return None, path


@lru_cache(maxsize=256)  # the API routes' paths: a few dozen
def _api_route(path: str) -> tuple[str | None, str, tuple[str, ...]]:
    """An API route's behaviour prefix, its path without it, and the methods it takes: once a path."""
    from_prefix, bare = split_behaviour_prefix(path)
    return from_prefix, bare, ALLOWED_METHODS["GET" if bare in GET_ROUTES else "POST"]


def choose_behaviour(asked: str | None, from_prefix: str | None, default: str) -> str:
    """Path prefix, then the ``X-Mockllama-Behaviour`` header (``asked``), then the server default."""
    if from_prefix is not None:
        return from_prefix
    if asked is None:
        return default
    behaviour = asked.strip().lower()
    if behaviour not in BEHAVIOURS:
        raise RequestError(
            400, f"mockllama: unknown {BEHAVIOUR_HEADER} {asked!r}; use one of: {', '.join(BEHAVIOURS)}."
        )
    return behaviour


def _body_at_hand(request: web.Request, limit: int) -> bytes | None:
    """The usual case: a body of a length within the limit, all in with the head, read as one bytes
    with no loop and no coroutine (request.read() has both). None otherwise, or
    when something before the handler has read it already (request.read() has it then)."""
    length = request.content_length
    if length is not None and length <= limit and request.content.is_eof():
        body = request.content.read_nowait()
        if body or not length:
            return body
    return None


async def _read_body(request: web.Request, limit: int, timeout: float) -> bytes:
    if request.content_length is not None and request.content_length > limit:
        raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=request.content_length)
    if request.content.is_eof():
        return await request.read()
    try:
        # aiohttp enforces client_max_size on bodies of unknown length, and waits for one as long as
        # the connection lives: a body that stops short of its Content-Length would hold it for ever
        return await asyncio.wait_for(request.read(), timeout)
    except asyncio.TimeoutError:  # the builtin TimeoutError only from Python 3.11
        raise RequestError(
            408, f"mockllama: the request body did not arrive in full within {timeout:g} s (serve --body-timeout)."
        ) from None


@lru_cache(maxsize=4096)
def reply_headers(
    recorded: tuple[tuple[str, str], ...],
    decided_by: str | None,
    behaviour: str,
    scenario: str,
    selected_by: str,
    turn: int,
) -> CIMultiDictProxy:
    """The head of a replayed reply: the recorded headers (less the hop-by-hop ones) and mockllama's
    own. Built once per recorded header set and selection, not on every request. The benchmark's
    floor sends the same head (bench.run)."""
    headers = CIMultiDict((name, value) for name, value in recorded if name.lower() not in HOP_BY_HOP)
    headers.update(mockllama_headers(behaviour, scenario))
    headers["X-Mockllama-Selected-By"] = selected_by
    headers[TURN_HEADER] = str(turn)
    if decided_by:
        headers["X-Mockllama-Decided-By"] = decided_by
    _refuse_unsendable(headers, scenario)
    return CIMultiDictProxy(headers)


def _refuse_unsendable(headers: CIMultiDict, scenario: str) -> None:
    """A head aiohttp would refuse to send is an error reply now, while one can still be sent and
    journalled as what it is, not a 200 the client never gets. The load checks keep such values
    out of recordings: this holds for whatever they miss. Once per head built (``reply_headers``
    is cached)."""
    for name, value in headers.items():
        if UNSENDABLE_IN_A_HEADER.search(value):
            raise RequestError(
                500,
                f"mockllama: the recording {scenario!r} cannot be replayed: its {name} header would be "
                f"{value!r}, and a control character cannot be sent in a header.",
            )


def _what_is_asked(
    path: str, asked_method: str, behaviour_header: str | None, default: str, raw: bytes
) -> tuple[str, str, str]:
    """(behaviour, method to answer as, path without the behaviour prefix) of a request whose body
    is in; or the route's 405, the 400 for an unknown behaviour, or the 400 for a body nested too
    deep to parse."""
    from_prefix, bare, allowed = _api_route(path)
    if asked_method not in allowed:
        raise web.HTTPMethodNotAllowed(asked_method, allowed)
    behaviour = choose_behaviour(behaviour_header, from_prefix, default)
    refuse_deep_nesting(raw)
    return behaviour, "GET" if asked_method == "HEAD" else asked_method, bare  # HEAD is answered as GET


def _body_so_far(request: web.Request, settings: Settings) -> bytes | None:
    """The request's body, without a coroutine when it can be (the usual case): none but a POST's,
    which is all in with the head. None: wait for it with ``_body_awaited``."""
    return _body_at_hand(request, settings.max_body_bytes) if request.method == "POST" else b""


async def _body_awaited(request: web.Request, settings: Settings) -> bytes:
    """A POST's body that is not all in yet. Waited for only on a route that takes a POST: any
    other gets its 405 first."""
    if "POST" not in _api_route(request.path)[2]:
        return b""
    return await _read_body(request, settings.max_body_bytes, settings.body_timeout)


async def read_request(request: web.Request, settings: Settings) -> tuple[str, str, str, bytes]:
    """``serve --upstream``'s first steps, as ``replay_route`` takes them: (behaviour, method, path
    without the behaviour prefix, body). ``settings``: the app's, looked up once per app by the
    route: each ``request.app[...]`` is three Python calls."""
    raw = _body_so_far(request, settings)
    if raw is None:
        raw = await _body_awaited(request, settings)
    trace_of(request).raw = raw
    behaviour, method, path = _what_is_asked(
        request.path, request.method, request.headers.get(BEHAVIOUR_HEADER), settings.behaviour, raw
    )
    return behaviour, method, path, raw


def send_whole(answer: Answer, trace: Trace) -> web.Response:
    """A plain body that no step applies to, sent at once from the handler."""
    trace.turn, trace.headers = answer.turn, answer.headers
    trace.bytes_sent, trace.finished = len(answer.reply.body), True  # the journal need not ask the reply
    return plain_reply(answer.reply, answer.headers)


# What may happen to a reply on its way out, in the order it happens: every registered step
# (``server.steps``), made once per app.
OUTGOING_STEPS = web.AppKey("outgoing_steps", tuple)


def answer_to(
    settings: Settings,
    faults: FaultPlan,
    steps: tuple[Step, ...],
    behaviour: str,
    selection: Selection,
    raw: bytes,
    fault_header: str | None,
) -> Answer:
    """A recorded interaction -> the behaviour's reply (to the request ``raw``) -> a fault, if one
    is asked for (from ``faults``, the app's plan) -> those of ``steps`` that apply."""
    interaction = selection.interaction
    scenario = settings.scenarios[interaction.scenario]
    reply = reply_to(behaviour, interaction, scenario, raw)
    headers = reply_headers(
        reply.headers, reply.decided_by, behaviour, interaction.scenario, selection.how, selection.turn
    )
    fault = faults.choose(fault_header, interaction.scenario)
    return Answer(interaction, scenario, reply, headers, selection.turn, fault).with_steps(steps)


# The answers remembered, and the largest body one is remembered for: 256 of 64 KB at most, the
# 16 MB the matcher's memo holds, and as many echoed replies as spec's echo keeps itself. A count
# bound keeps each hit in C (functools.lru_cache).
REMEMBERED_ANSWERS = 256
ANSWERED_BODY_BYTES = 64 * 1024


def replay_route(app: web.Application) -> Handler:
    """The API routes' handler for ``app``: replay what the recordings answer. What it needs of the
    app is looked up here, once, not on each request (each ``request.app[...]`` is three Python
    calls).

    The same request (path, method, body bytes and mockllama's own three headers) always gets the
    same answer, so each is decided once and then remembered, as the selection is, rather than
    decided again on every request (the route, the behaviour, the nesting check, the selection,
    the reply, its head, the fault and the outgoing steps that apply). Failures are decided anew
    each time, and so is a request with a body over ``ANSWERED_BODY_BYTES``."""
    settings, faults, steps = app[SETTINGS], app[FAULT_PLAN], app[OUTGOING_STEPS]
    matcher = settings.matcher

    def decide(
        path: str,
        asked_method: str,
        raw: bytes,
        behaviour_header: str | None,
        scenario_header: str | None,
        fault_header: str | None,
    ) -> Answer:
        behaviour, method, bare = _what_is_asked(path, asked_method, behaviour_header, settings.behaviour, raw)
        selection = matcher.select(method, bare, raw, scenario_header)
        return answer_to(settings, faults, steps, behaviour, selection, raw, fault_header)

    remembered = lru_cache(maxsize=REMEMBERED_ANSWERS)(decide)
    generation = matcher.generation

    async def replay(request: web.Request) -> web.StreamResponse:
        nonlocal generation
        raw = _body_so_far(request, settings)
        if raw is None:
            raw = await _body_awaited(request, settings)
        trace = trace_of(request)
        trace.raw = raw
        if generation != matcher.generation:  # recordings were added: an answer may now differ
            remembered.cache_clear()
            generation = matcher.generation
        headers = request.headers
        key = (
            request.path,
            request.method,
            raw,
            headers.get(BEHAVIOUR_HEADER),
            headers.get(SCENARIO_HEADER),
            headers.get(FAULT_HEADER),
        )
        answer = (remembered if len(raw) <= ANSWERED_BODY_BYTES else decide)(*key)
        if answer.whole:  # the JSON hot path: no coroutine more
            return send_whole(answer, trace)
        return await send_answer(request, answer, trace)

    return replay


async def send_selection(
    request: web.Request, settings: Settings, faults: FaultPlan, behaviour: str, selection: Selection, raw: bytes
) -> web.StreamResponse:
    """The answer to a selection, sent (``serve --upstream``'s way, where nothing is remembered)."""
    steps = request.app[OUTGOING_STEPS]
    answer = answer_to(settings, faults, steps, behaviour, selection, raw, request.headers.get(FAULT_HEADER))
    return await send_answer(request, answer, trace_of(request))


async def send_answer(request: web.Request, answer: Answer, trace: Trace) -> web.StreamResponse:
    """The answer -> each outgoing step that applies to it -> the writer. The journal's trace goes along."""
    if answer.whole:
        return send_whole(answer, trace)
    trace.turn = answer.turn
    outgoing = Outgoing.of(answer.reply, answer.headers)
    for step in answer.steps:
        step.shape(answer, outgoing)
    # what the reply is sent with: unless a step changed them, shared by every reply of this selection
    trace.headers = outgoing.headers
    return await send(request, trace, outgoing)


async def unknown_route(request: web.Request) -> web.Response:
    raise web.HTTPNotFound()


# cpp-httplib, which llama-server is built on, parses only these methods: any other (CONNECT, TRACE)
# gets a 400 with an empty body, whatever its target (tests/live/test_live_hardening.py). Checked in
# the handlers' wrapper and in the router's own replies, not in a middleware, whose machinery every
# request would pass through.
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})


HTTP_1 = (HttpVersion11, HttpVersion10)


def not_http_1(request: web.Request) -> bool:
    """A request line whose version is not HTTP/1.0 or 1.1: ``HTTP/2.0``, ``HTTP/0.9`` or none at
    all, which aiohttp's parser takes (it refuses other versions itself) and cpp-httplib answers
    with the 400 it gives an unknown method (tests/live/test_live_hardening.py). aiohttp's C parser
    hands out its HttpVersion11 constant, so the common case is one identity test."""
    version = request.version
    return version is not HttpVersion11 and version not in HTTP_1


def _unknown_method(request: web.Request) -> web.Response:
    response = web.Response(status=400, headers=mockllama_headers(request.app[SETTINGS].behaviour, "none"))
    response.force_close()  # as llama-server does
    return response


def _shape_router_errors(request: web.Request, response: web.StreamResponse) -> None:
    """A request whose target is not a path (``CONNECT host:443``, ``OPTIONS *``) matches no route,
    not even the catch-all, so aiohttp answers it itself, a 404 in plain text; reshape that one
    reply as llama-server answers it, before anything is sent (``server.aiohttp_private`` says
    how). Every handler's reply already carries X-Mockllama-Behaviour and passes untouched."""
    if BEHAVIOUR_HEADER in response.headers or not isinstance(response, web.Response):
        return
    response.headers.update(mockllama_headers(request.app[SETTINGS].behaviour, "none"))
    preflight = request.method == "OPTIONS" and request.raw_path == "*"
    policy, origin = request.app[cors.CORS], request.headers.get(cors.ORIGIN)
    refused = request.method not in KNOWN_METHODS or not_http_1(request)
    if refused or (preflight and policy.allows(origin)):
        # OPTIONS *: a preflight; CONNECT host:443: a 400
        preflight = preflight and not refused
        reshape_prepared(response, 200 if preflight else 400, b"")
        if preflight:
            response.headers.update(cors.PREFLIGHT_HEADERS)
            response.content_type = "text/html"
        else:
            del response.headers["Content-Type"]
            response.force_close()
        return
    if preflight:  # from an origin --cors-origin leaves out: refused as every path's preflight is
        status, message = 403, cors.not_allowed(policy, origin)
    else:
        status, message = (
            response.status,
            (
                f"mockllama: {request.method} {request.raw_path or '(no path)'} is not a request mockllama "
                "answers: it serves paths such as /v1/responses and is not a proxy."
            ),
        )
    reshape_prepared(response, status, error_body(status, message))
    response.content_type = "application/json"


def finishing_hook(set_origin: Callable[[web.Request, web.StreamResponse], None]):
    """The app's one ``on_response_prepare`` hook: the allowed origin on every reply, then the
    router's own error replies reshaped. One hook for both, because every hook costs each reply a
    coroutine of its own."""

    async def finish_head(request: web.Request, response: web.StreamResponse) -> None:
        set_origin(request, response)
        if response.status >= 400:
            _shape_router_errors(request, response)

    return finish_head


_preflight = answers_errors(cors.preflight)


def add_route(app: web.Application, path: str, handler) -> None:
    """Every path answers a CORS preflight (``OPTIONS``) as llama-server does; ``handler`` takes the
    rest. mockllama's own routes (``/_mockllama/...``) refuse other origins' pages (``cors.own_route``)."""
    app.router.add_route("OPTIONS", path, _preflight)
    app.router.add_route("*", path, cors.own_route(handler) if path.startswith(cors.OWN_PREFIX) else handler)


def create_replay_app(
    scenarios: dict[str, Scenario],
    options: ReplayOptions | None = None,
    *,
    route: Callable[[web.Application], Handler] | None = None,
    pages: tuple[Callable[[web.Application], None], ...] = (),
) -> web.Application:
    """The replay server, serving ``scenarios`` with ``options`` (default: ``serve``'s defaults).
    An option that does not fit the recordings (a ``fallback`` or ``setup`` none of them has, a
    fault for a scenario not loaded) raises ``OptionError``, which names it.

    The tools beside it plug in without the server knowing them: ``route`` makes the handler of
    the API routes from the app (``serve --upstream``'s replay-or-record; by default
    :func:`replay_route`), and each of ``pages`` adds routes of its own (the teaching page) before
    the catch-all. The server journals the API routes' replies and turns their failures into error
    replies itself."""
    options = options if options is not None else ReplayOptions()
    app = web.Application(client_max_size=options.max_body_bytes)
    with blame("setup"):
        served_setup(scenarios, options.setup)
    with blame("fallback"):
        matcher = Matcher(scenarios, options.fallback, options.setup)
    app[SETTINGS] = Settings.of(options, scenarios, matcher)
    journal = app[JOURNAL] = Journal(options.journal_size, options.journal_body_bytes, options.journal_bytes)
    with blame("faults"):
        app[FAULT_PLAN] = FaultPlan.build(scenarios, dict(options.faults))
    app[OUTGOING_STEPS] = made_steps(app[SETTINGS], app[FAULT_PLAN])
    stopping = app[STOPPING] = Stopping()
    app.on_shutdown.append(stopping.on_shutdown)  # first: the waits end before any other hook waits
    if options.allowed_hosts:  # empty: any Host header, as llama-server
        app.middlewares.append(host_guard(frozenset(host_name(host) for host in options.allowed_hosts)))
    with blame("cors_origins"):
        set_origin = cors.install(app, options.cors_origins)

    handler = answers_errors((route or replay_route)(app), journal)
    for prefix in ["", *(f"/{b}" for b in BEHAVIOURS)]:
        for path in (*POST_ROUTES, *GET_ROUTES):
            add_route(app, prefix + path, handler)
    for add_page in pages:
        add_page(app)
    add_route(app, "/_mockllama/journal", answers_errors(journal_route))  # not journalled itself
    add_route(app, "/{tail:.*}", answers_errors(unknown_route, journal))  # last: whatever no route above took
    app.on_response_prepare.append(finishing_hook(set_origin))
    app.on_startup.append(quiet_accept_errors)
    app.cleanup_ctx.append(nearest_prepared_soon(matcher))
    return app
