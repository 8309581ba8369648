"""Test double of llama-server behind a reverse proxy that wants credentials in the URL.

Mirrors a stock llama-server (the `buggy` behaviour, its real recordings) published behind a
proxy that asks for HTTP Basic credentials, as nginx `auth_basic` does, and for a key in the
query string, as API gateways do (`?key=...`). A user points `check` at
`http://USER:PASSWORD@host/?key=KEY`, as curl takes it (issue 27 item 13): the proxy answers
401 to any request that lacks either, and keeps what it was sent in `app[SEEN]`.
"""

from __future__ import annotations

import base64

from aiohttp import web

from .relay import relay_app

USER, PASSWORD, KEY = "alice", "s3cr@t:pass", "gw-9d1c"
SEEN = web.AppKey("seen", list)  # (Authorization header, query string) of each request


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@web.middleware
async def _require_credentials(request: web.Request, handler) -> web.StreamResponse:
    request.app[SEEN].append((request.headers.get("Authorization"), request.query_string))
    if request.headers.get("Authorization") != _basic(USER, PASSWORD) or request.query.get("key") != KEY:
        return web.json_response(
            {"error": {"code": 401, "message": "credentials required", "type": "auth_error"}},
            status=401,
            headers={"WWW-Authenticate": 'Basic realm="llama-server"'},
        )
    return await handler(request)


def create_app(mockllama_url: str) -> web.Application:
    app = relay_app(mockllama_url, behaviour="buggy")
    app[SEEN] = []
    app.middlewares.append(_require_credentials)
    return app
