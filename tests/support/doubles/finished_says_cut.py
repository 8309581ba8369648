"""Test double of a server whose finished replies say "completed" at the top and "cut" everywhere else.

A reply that finished inside its limit comes back with `status: "completed"` and a stream ending
with `response.completed`, as it should, but also with `incomplete_details: {"reason":
"max_output_tokens"}`, its last item `"incomplete"` and no `completed_at`. Cut replies are
`fixed`'s, honest. A client that reads `incomplete_details` or the item status (the reference
client does) takes every good answer for a cut one, and a retry ladder never completes. A check
that judges a finished reply by its status and terminal event alone passes it (issue 55 item 1).
"""

from __future__ import annotations

from aiohttp import web

from .relay import Events, relay_app, terminal_response


def _says_cut(response: dict) -> dict:
    if response.get("status") != "completed":
        return response
    output = [dict(item) for item in response.get("output") or []]
    if output:
        output[-1]["status"] = "incomplete"
    return {**response, "incomplete_details": {"reason": "max_output_tokens"}, "completed_at": None, "output": output}


def _stream(events: Events) -> Events:
    return terminal_response(events, _says_cut)


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, _says_cut, _stream)
