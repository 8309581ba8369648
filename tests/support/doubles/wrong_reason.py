"""Test double of a server that reports a cut as `incomplete`, but with the chat API's reason.

A server built on a chat-completions backend may pass the backend's `finish_reason` through:
`incomplete_details: {"reason": "length"}`. The status is honest, but the Responses API's reason
for a reply cut at the limit is `"max_output_tokens"` (the only other is `"content_filter"`), so a
client that tells the two apart by the reason misses the cut. Everything else is an honest
server's (`fixed`'s), so this double holds the wrong reason alone (issue 46).
"""

from __future__ import annotations

from aiohttp import web

from .relay import Events, relay_app, terminal_response


def _length(response: dict) -> dict:
    if (response.get("incomplete_details") or {}).get("reason") != "max_output_tokens":
        return response
    return {**response, "incomplete_details": {"reason": "length"}}


def _stream(events: Events) -> Events:
    return terminal_response(events, _length)


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, _length, _stream)
