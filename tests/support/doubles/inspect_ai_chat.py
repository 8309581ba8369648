"""Test double of inspect_ai's chat agent bridge: every cut reply says ``finish_reason: "stop"``.

Mirrors UKGovernmentBEIS/inspect_ai at 499e6152, as read for issue 54 (inspect_ai issue 5143,
"Chat agent bridge reports max-token truncation as finish_reason=stop", closed by PR 5189 after
that commit): ``openai_finish_reason`` in ``src/inspect_ai/model/_openai.py`` (:476-485) maps
"model_length" to "length" and anything else it does not name, "max_tokens" included, to "stop";
the sandbox proxy's stream copies it onto its last chunk (``proxy.py``, :1598-1608). So a reply cut
at ``max_tokens`` says "stop", a tool call or not, in the body and in the stream; the usage is
Inspect's count of what was generated, every token. The Responses side is fixed's (honest).
"""

from __future__ import annotations

from aiohttp import web

from .relay import Events, relay_app


def _stop(choice: dict) -> dict:
    return {**choice, "finish_reason": "stop"} if choice.get("finish_reason") == "length" else choice


def _body(body: dict, request: dict) -> dict:
    return {**body, "choices": [_stop(choice) for choice in body["choices"]]}


def _stream(events: Events, request: dict) -> Events:
    return [(name, {**data, "choices": [_stop(c) for c in data.get("choices", [])]}) for name, data in events]


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, rewrite_chat_body=_body, rewrite_chat_events=_stream)
