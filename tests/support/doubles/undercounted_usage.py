"""Test double of stock llama-server behind something that counts output tokens one short.

Where a server's status lies (stock llama-server's `status: "completed"` on a cut reply), a
client has one signal of the cut left: `usage.output_tokens` reaching `max_output_tokens` (the
reference client's usage rule). A server that counts the output its own way (leaving out the
last token, or the tokens the chat template adds) takes that away too. This double sends the real
recordings (`buggy`) with `usage.output_tokens`, and `total_tokens` with it, one lower: `check`
must say that the fallback signal is gone (issue 46).
"""

from __future__ import annotations

from aiohttp import web

from .relay import Events, relay_app, terminal_response


def _one_short(response: dict) -> dict:
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return response
    fewer = {"output_tokens": usage["output_tokens"] - 1, "total_tokens": usage["total_tokens"] - 1}
    return {**response, "usage": {**usage, **fewer}}


def _stream(events: Events) -> Events:
    return terminal_response(events, _one_short)


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, _one_short, _stream, behaviour="buggy")
