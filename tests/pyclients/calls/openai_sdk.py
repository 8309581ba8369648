"""The openai SDK: ``responses.create``, ``responses.stream()``, ``responses.parse``, chat."""

from __future__ import annotations

import openai
from harness import CHAT_TOOL, RESPONSES_TOOL, Call, Outcome, parses, shown
from pydantic import BaseModel

CLIENT = "openai"
PACKAGES = ("openai",)  # named with their versions on the page
CHECK = """On `/v1/responses`, `response.status` says `"incomplete"` for a cut reply, with
`incomplete_details.reason`; llama-server (`buggy`) says `"completed"` instead, for text and for a
cut `function_call` alike. So also count a reply as cut when `usage.output_tokens` reaches
`max_output_tokens`, and never run a `function_call` whose `arguments` do not parse as JSON.
`responses.stream()` cannot read llama-server's stream (`TypeError` everywhere but `spec`) and
raises on any stream that ends `response.incomplete`; iterate `responses.create(stream=True)` and
read the terminal event instead. `responses.parse` reads no status: a cut reply fails as invalid
JSON. Chat's `finish_reason: "length"` is honest on llama-server, but not on every server."""


class Answer(BaseModel):
    text: str


def _client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)


def _request(kind) -> dict:
    tools = {"tools": [RESPONSES_TOOL]} if kind.tool else {}
    return {
        "model": kind.model("gpt-4o-mini"),
        "input": kind.prompt,
        "max_output_tokens": kind.limit,
        "temperature": 0,
        **tools,
    }


def _status(response) -> str:
    details = response.incomplete_details
    reason = f" ({details.reason})" if details else ""
    return f"`status` {response.status}{reason}, `output_text` {shown(response.output_text)}"


def _calls(response) -> str:
    calls = [item for item in response.output if item.type == "function_call"]
    if not calls:
        return "no call"
    return "; ".join(f"call {item.status}, {parses(item.arguments)}" for item in calls)


def create(base, kind) -> Outcome:
    response = _client(base).responses.create(**_request(kind))
    return Outcome(says=_status(response), tool=_calls(response) if kind.tool else "-")


def stream(base, kind) -> Outcome:
    with _client(base).responses.stream(**_request(kind)) as events:
        for _ in events:
            pass
        response = events.get_final_response()
    return Outcome(says=_status(response), stream="parses", tool=_calls(response) if kind.tool else "-")


def parse(base, kind) -> Outcome:
    response = _client(base).responses.parse(**_request(kind), text_format=Answer)
    return Outcome(says=f"{_status(response)}, `output_parsed` {response.output_parsed!r}")


def _chat_request(kind) -> dict:
    tools = {"tools": [CHAT_TOOL]} if kind.tool else {}
    messages = [{"role": "user", "content": kind.prompt}]
    return {
        "model": kind.model("gpt-4o-mini"),
        "messages": messages,
        "max_completion_tokens": kind.limit,
        "temperature": 0,
        **tools,
    }


def chat(base, kind) -> Outcome:
    choice = _client(base).chat.completions.create(**_chat_request(kind)).choices[0]
    calls = choice.message.tool_calls or []
    tool = "; ".join(f"call, {parses(c.function.arguments)}" for c in calls) or "no call"
    return Outcome(says=f"`finish_reason` {choice.finish_reason}", tool=tool if kind.tool else "-")


def chat_stream(base, kind) -> Outcome:
    chunks = list(_client(base).chat.completions.create(**_chat_request(kind), stream=True))
    reasons = [choice.finish_reason for chunk in chunks for choice in chunk.choices if choice.finish_reason]
    return Outcome(says=f"`finish_reason` {reasons[-1] if reasons else None}", stream="parses")


CALLS = (
    Call("`responses.create`", create),
    Call("`responses.stream()`", stream, streams=True),
    Call("`responses.parse`", parse, kinds=("cut text", "finished")),
    Call("`chat.completions.create`", chat),
    Call("`chat.completions.create(stream=True)`", chat_stream, streams=True),
)
