"""Test double of aimock's /v1/responses, where three variants meet.

Mirrors CopilotKit/aimock `src/responses.ts` as read for issue 26: `responsesStatus` maps a
`length` finish reason to `status: "incomplete"`, but the envelope has no `incomplete_details`
and no `completed_at`; every message and function_call item is built with `status:
"completed"`; the stream sends `response.function_call_arguments.done` for each call and always
ends with `response.completed`. So: 'completed' on the cut item (as vLLM, issue 57998) and the
hybrid terminal event (as vLLM's stream), with the reason missing.
"""

from __future__ import annotations

from aiohttp import web

from .relay import (
    Events,
    item_done_completed,
    items_completed,
    relay_app,
    terminal_completed,
    terminal_response,
)


def _envelope(response: dict) -> dict:
    kept = {key: value for key, value in response.items() if key not in ("incomplete_details", "completed_at")}
    return items_completed(kept)


def _stream(events: Events) -> Events:
    return terminal_response(terminal_completed(item_done_completed(events)), _envelope)


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, _envelope, _stream)
