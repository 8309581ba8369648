"""Test double of LM Studio's /v1/chat/completions: ``completion_tokens`` one short on a length stop.

Mirrors lmstudio-ai/lmstudio-bug-tracker issue 2335 (open, LM Studio 0.4.22), as read for issue
54: a chat completion stopped at ``max_tokens`` says ``finish_reason: "length"``, honestly, but
``usage.completion_tokens`` is ``max_tokens - 1`` (``max_tokens`` 1, 5, 20 give 0, 4, 19), and
``total_tokens`` the prompt plus that. LM Studio is closed source: the bug tracker is the source.
A reply that finished is counted as it is. The Responses side is fixed's (honest).
"""

from __future__ import annotations

from aiohttp import web

from .relay import relay_app


def _body(body: dict, request: dict) -> dict:
    if body["choices"][0].get("finish_reason") != "length" or "usage" not in body:
        return body
    usage = body["usage"]
    counted = request["max_tokens"] - 1
    return {
        **body,
        "usage": {**usage, "completion_tokens": counted, "total_tokens": usage["prompt_tokens"] + counted},
    }


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, rewrite_chat_body=_body)
