"""litellm: ``responses`` and ``completion``, streamed and not, on an ``openai/`` model."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else it fetches a price list at import

import litellm  # noqa: E402
from harness import CHAT_TOOL, RESPONSES_TOOL, Call, Outcome, parses  # noqa: E402

CLIENT = "litellm"
PACKAGES = ("litellm",)  # named with their versions on the page
CHECK = """`litellm.responses()` raises any `max_output_tokens` under 16 to 16, so its seed request reaches
`text-cut-16`. It passes `status` and `incomplete_details` through and acts on neither. A stream
with a function call in it ends with a `response.completed` event even where the server sent
`response.incomplete`: read the final response's `status`, not the event's name. `completion()` gives chat's
`finish_reason` (`"tool_calls"` where a reply holding a call says `"stop"`), honest on llama-server but not
on every server; no call's arguments are checked."""
COMMON = {"api_key": "unused", "temperature": 0, "num_retries": 0}


def _model(kind) -> str:
    return "openai/" + kind.model("gpt-4o-mini")


def responses(base, kind) -> Outcome:
    tools = {"tools": [RESPONSES_TOOL]} if kind.tool else {}
    reply = litellm.responses(
        api_base=f"{base}/v1", input=kind.prompt, max_output_tokens=kind.limit, model=_model(kind), **COMMON, **tools
    )
    details = reply.incomplete_details
    reason = f" ({details.reason})" if details else ""
    calls = [item for item in reply.output if getattr(item, "type", None) == "function_call"]
    tool = "; ".join(f"call {item.status}, {parses(item.arguments)}" for item in calls) or "no call"
    return Outcome(says=f"`status` {reply.status}{reason}", tool=tool if kind.tool else "-")


def responses_stream(base, kind) -> Outcome:
    tools = {"tools": [RESPONSES_TOOL]} if kind.tool else {}
    events = list(
        litellm.responses(
            api_base=f"{base}/v1",
            input=kind.prompt,
            max_output_tokens=kind.limit,
            stream=True,
            model=_model(kind),
            **COMMON,
            **tools,
        )
    )
    last = events[-1]
    status = getattr(getattr(last, "response", None), "status", None)
    kind_of_event = getattr(last.type, "value", last.type)  # an enum of event names
    return Outcome(says=f"last event `{kind_of_event}`, `status` {status}", stream="parses")


def completion(base, kind, stream=False) -> Outcome:
    tools = {"tools": [CHAT_TOOL]} if kind.tool else {}
    messages = [{"role": "user", "content": kind.prompt}]
    reply = litellm.completion(
        api_base=f"{base}/v1",
        messages=messages,
        max_tokens=kind.limit,
        stream=stream,
        model=_model(kind),
        **COMMON,
        **tools,
    )
    if stream:
        chunks = list(reply)
        reasons = [c.finish_reason for chunk in chunks for c in chunk.choices if c.finish_reason]
        return Outcome(says=f"`finish_reason` {reasons[-1] if reasons else None}", stream="parses")
    choice = reply.choices[0]
    calls = choice.message.tool_calls or []
    tool = "; ".join(f"call, {parses(c.function.arguments)}" for c in calls) or "no call"
    return Outcome(says=f"`finish_reason` {choice.finish_reason}", tool=tool if kind.tool else "-")


CALLS = (
    Call("`responses`", responses),
    Call("`responses(stream=True)`", responses_stream, streams=True),
    Call("`completion`", completion),
    Call("`completion(stream=True)`", lambda base, kind: completion(base, kind, stream=True), streams=True),
)
