"""Test double of a server whose fix went too far: it says `incomplete` to every reply.

A server that reports every reply as cut, one that finished well inside its limit too, passes
a check that only sends requests that cannot finish: its status then says nothing a client can
use. This double answers every /v1/responses request as an honest server answers a cut one
(`status: "incomplete"`, `incomplete_details.reason: "max_output_tokens"`, no `completed_at`, the
last item "incomplete", a stream that ends with `response.incomplete`), whatever really happened:
the chat twin still says `stop` where the reply finished. `check` must send a request with room
to finish, see it reported as cut, and say so (issue 46).
"""

from __future__ import annotations

from aiohttp import web

from .relay import Events, relay_app, terminal_response

INCOMPLETE_DETAILS = {"reason": "max_output_tokens"}


def _incomplete(response: dict) -> dict:
    output = [dict(item) for item in response.get("output") or []]
    if output:
        output[-1]["status"] = "incomplete"
    return {
        **response,
        "status": "incomplete",
        "incomplete_details": dict(INCOMPLETE_DETAILS),
        "completed_at": None,
        "output": output,
    }


def _stream(events: Events) -> Events:
    *rest, (_, data) = terminal_response(events, _incomplete)
    return [*rest, ("response.incomplete", {**data, "type": "response.incomplete"})]


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, _incomplete, _stream)
