"""Test double of stock llama-server behind something that writes `usage` as a string.

Untrusted input for `check`: a reply whose `usage` is not an object is not the shape of a
Responses reply, so `check` can't tell (exit 2) and says which field, rather than judging it.
"""

from __future__ import annotations

from aiohttp import web

from .relay import Events, relay_app, terminal_response


def _usage_as_text(response: dict) -> dict:
    return {**response, "usage": "8 tokens"}


def _stream(events: Events) -> Events:
    return terminal_response(events, _usage_as_text)


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, _usage_as_text, _stream, behaviour="buggy")
