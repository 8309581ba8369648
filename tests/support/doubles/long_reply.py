"""Test double of a server whose honest reply is longer than 8 KiB and ends the connection.

Mirrors llama-server's `Connection: close` (every bundled recording carries it; issue 27 item 2)
on a reply longer than the 8 KiB that http.client reads with the headers, as a longer generation
or a chattier server sends. The reply is the honest (`fixed`) one, made long with what the
formats allow around it: whitespace after a JSON body, SSE comment lines before a stream's
events (a comment line is ignored by every SSE reader). With the reading bug, every read after
the first 8 KiB failed with "Bad file descriptor" and `check` said "cannot reach" (exit 2).
"""

from __future__ import annotations

from aiohttp import web

from .relay import relay_app

PADDING = 16 * 1024


@web.middleware
async def _long_and_closing(request: web.Request, handler) -> web.StreamResponse:
    response = await handler(request)
    if response.content_type == "text/event-stream":
        response.body = b": keep-alive\n\n" * (PADDING // 14) + response.body
    else:
        response.body = response.body + b" " * PADDING
    response.force_close()  # sends Connection: close, and closes once the reply is written
    return response


def create_app(mockllama_url: str) -> web.Application:
    app = relay_app(mockllama_url)
    app.middlewares.append(_long_and_closing)
    return app
