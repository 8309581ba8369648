"""Test double of vLLM's item-status variant: "incomplete" at the top, "completed" on the cut item.

Mirrors vllm-project/vllm issue 57998 ("`/v1/responses` output items are always `status:
"completed"`, even inside an incomplete response", open): a reply cut by max_output_tokens says
`status: "incomplete"` and `incomplete_details: {"reason": "max_output_tokens"}`, but the message
or function_call item that was cut says "completed", and there is no `completed_at` (the
non-streamed reply is vLLM's, read for issue 46). The stream here ends honestly with
`response.incomplete`, so that this double holds the item-status variant alone (vLLM's own stream
adds the hybrid terminal event: see hybrid_terminal.py and aimock.py).
"""

from __future__ import annotations

from aiohttp import web

from .relay import (
    Events,
    item_done_completed,
    items_completed,
    relay_app,
    terminal_response,
)


def _body(response: dict) -> dict:
    """vLLM's response object has no completed_at field (protocol.py, ResponsesResponse)."""
    return {key: value for key, value in items_completed(response).items() if key != "completed_at"}


def _stream(events: Events) -> Events:
    return terminal_response(item_done_completed(events), items_completed)


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, _body, _stream)
