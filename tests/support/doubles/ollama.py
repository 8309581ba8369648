"""Test double of Ollama's /v1/responses: a cut reply is reported "completed" everywhere.

Mirrors ollama/ollama `openai/responses.go` as read for issue 26 (ollama/ollama PR 17239, open,
"report incomplete status when responses hit the output token limit"): `ToResponse` and the
stream's final `buildResponseObject` write `status: "completed"` and `incomplete_details: nil`
whatever the stop reason; `completed_at` is set when the reply is written; every output item is
"completed"; the stream sends `response.function_call_arguments.done` for each call and ends with
`response.completed`. The same failure as stock llama-server, with arguments.done and an
explicit null where llama-server leaves the field out.
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


def _completed(response: dict) -> dict:
    return {
        **items_completed(response),
        "status": "completed",
        "incomplete_details": None,
        "completed_at": response.get("created_at"),
    }


def _stream(events: Events) -> Events:
    return terminal_response(terminal_completed(item_done_completed(events)), _completed)


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, _completed, _stream)
