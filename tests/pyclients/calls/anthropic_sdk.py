"""The Anthropic SDK: ``messages.create`` and ``messages.stream()``, with a tool. It has no
``temperature`` parameter, so its requests carry none."""

from __future__ import annotations

import anthropic
from harness import ANTHROPIC_TOOL, Call, Outcome, shown

CLIENT = "anthropic"
PACKAGES = ("anthropic",)  # named with their versions on the page
CHECK = """The SDK has no `temperature`, so its default requests reach the sampled
`messages-*-no-temperature` recordings. `stop_reason` is `"max_tokens"` for a cut reply in every
behaviour: llama-server's `/v1/messages` says so itself. A cut `tool_use` arrives with
`input: {}`, which runs as a call with no arguments: check `stop_reason` first. No recording
answers the finished prompt on `/v1/messages`."""
KINDS = ("cut text", "tool request", "cut call, chosen", "finished")  # no tool-cut-30 on /v1/messages
SWEEPS = ()  # the sweeps it could reach: none is recorded on /v1/messages yet


def _request(kind) -> dict:
    tools = {"tools": [ANTHROPIC_TOOL]} if kind.tool else {}
    model = kind.chosen_messages or "claude-x"
    return {"model": model, "max_tokens": kind.limit, "messages": [{"role": "user", "content": kind.prompt}], **tools}


def _client(base) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=base, api_key="unused", max_retries=0)  # it adds /v1/messages


def _said(message, kind) -> Outcome:
    text = "".join(block.text for block in message.content if block.type == "text")
    uses = [block for block in message.content if block.type == "tool_use"]
    tool = "; ".join(f"`tool_use`, `input` {block.input}" for block in uses) or "no call"
    return Outcome(says=f"`stop_reason` {message.stop_reason}, text {shown(text)}", tool=tool if kind.tool else "-")


def create(base, kind) -> Outcome:
    return _said(_client(base).messages.create(**_request(kind)), kind)


def stream(base, kind) -> Outcome:
    with _client(base).messages.stream(**_request(kind)) as events:
        for _ in events:
            pass
        outcome = _said(events.get_final_message(), kind)
    outcome.stream = "parses"
    return outcome


CALLS = (
    Call("`messages.create`", create, kinds=KINDS),
    Call("`messages.stream()`", stream, streams=True, kinds=KINDS),
)
