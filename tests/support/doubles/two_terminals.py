"""Test double of a stream that ends twice: `response.completed`, then `response.incomplete`.

A stream has exactly one terminal event (`response.completed`, `response.incomplete` or
`response.failed`). This double sends an honest cut stream (`fixed`'s) with one more event
before its `response.incomplete`: a `response.completed` whose response says `status:
"completed"` and carries a `completed_at`. A client that stops at the first terminal event, as
the streaming helpers do, takes the cut reply as finished; a check that judges only the last event
sees an honest stream (issue 46). Finished streams are relayed as they are.
"""

from __future__ import annotations

from aiohttp import web

from .relay import Events, relay_app


def _stream(events: Events) -> Events:
    *rest, (name, data) = events
    if data.get("type") != "response.incomplete":
        return events
    response = data["response"]
    completed = {
        "type": "response.completed",
        "response": {
            **response,
            "status": "completed",
            "incomplete_details": None,
            "completed_at": response.get("created_at"),
        },
    }
    return [*rest, ("response.completed", completed), (name, data)]


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, rewrite_events=_stream)
