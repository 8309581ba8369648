"""Test double of LocalAI's /v1/chat/completions: a cut reply holding a tool call says "tool_calls".

Mirrors mudler/LocalAI ``core/http/endpoints/openai/chat.go`` at 82c191af, as read for issue 54:
the non-streamed reply takes its calls from llama.cpp's own parser, which returns a call cut
mid-arguments too (:794-796), and writes ``finish_reason: "tool_calls"`` on a choice with calls
(:849), before and instead of "length" (``max_tokens`` reached turns only a "stop" into "length",
:1012-1020); the stream's final chunk says "tool_calls" when a call was sent (:631-640). A cut
text reply says "length"; usage is the backend's count. The Responses side is fixed's (honest):
this double is LocalAI's chat side alone.
"""

from __future__ import annotations

from aiohttp import web

from .relay import Events, relay_app


def _body(body: dict, request: dict) -> dict:
    choices = [
        {**choice, "finish_reason": "tool_calls"}
        if choice.get("finish_reason") == "length" and (choice.get("message") or {}).get("tool_calls")
        else choice
        for choice in body["choices"]
    ]
    return {**body, "choices": choices}


def _stream(events: Events, request: dict) -> Events:
    called = any(choice.get("delta", {}).get("tool_calls") for _, data in events for choice in data.get("choices", []))
    if not called:
        return events
    return [
        (
            name,
            {
                **data,
                "choices": [
                    {**c, "finish_reason": "tool_calls"} if c.get("finish_reason") == "length" else c
                    for c in data.get("choices", [])
                ],
            },
        )
        for name, data in events
    ]


def create_app(mockllama_url: str) -> web.Application:
    return relay_app(mockllama_url, rewrite_chat_body=_body, rewrite_chat_events=_stream)
