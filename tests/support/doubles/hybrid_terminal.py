"""Test double of the hybrid terminal event: a cut stream ends with `response.completed`
carrying a response whose status is "incomplete".

Mirrors the end of a cut stream in vLLM (vllm-project/vllm PR 45386, open: "the streaming path
still wraps that payload in a `response.completed` terminal event"; vllm-project/agentic-api
issue 273: "the direct vLLM stream's terminal event has `type: "response.completed"`, even though
the embedded response is `incomplete`") and in aimock (CopilotKit/aimock `src/responses.ts`: its
stream builders always push `type: "response.completed"`, with the status mapped from the finish
reason). Everything else is reported as an honest server does, so this double holds the variant
alone: a client that switches on the event type, as the streaming protocol invites, takes the
cut reply as finished.
"""

from __future__ import annotations

from aiohttp import web

from .relay import relay_app, terminal_completed


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, rewrite_events=terminal_completed)
