"""llama-index: ``OpenAIResponses`` and ``OpenAI`` (chat completions): ``chat``, ``stream_chat``, and
``chat_with_tools`` with a ``FunctionTool``. Runs in a virtualenv of its own, with openai 2.x."""

from __future__ import annotations

from harness import Call, Outcome, shown, write_file
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI, OpenAIResponses

CLIENT = "llama-index"
PACKAGES = ("llama-index-core", "llama-index-llms-openai", "openai")  # named with their versions on the page
CHECK = """`OpenAIResponses` sends `"instructions": null`, an empty system turn to llama-server, so it reaches
recordings of its own. Check `response.raw.status` (Responses) or
`response.raw.choices[0].finish_reason` (chat); `stream_chat`
hands over no status at all, and its last response has no text when the stream ends
`response.incomplete`.
`get_tool_calls_from_response` repairs cut arguments (`{'path': None}`) rather than refuse them:
check the status and `usage.output_tokens` before running a call."""
TOOL = FunctionTool.from_defaults(fn=write_file)


def _llm(base, kind, responses: bool):
    # llama-index refuses a model name it does not know, so a scenario is chosen by header instead
    chosen = {"X-Mockllama-Scenario": kind.chosen} if kind.chosen else {}
    common = {"model": "gpt-4o-mini", "api_base": f"{base}/v1", "api_key": "unused", "max_retries": 0}
    common["default_headers"] = chosen
    if responses:
        return OpenAIResponses(max_output_tokens=kind.limit, temperature=0, **common)
    return OpenAI(max_tokens=kind.limit, temperature=0, **common)


def _said(response, responses: bool) -> str:
    raw = response.raw
    text = shown(response.message.content or "")
    if responses:
        status = raw.get("status") if isinstance(raw, dict) else getattr(raw, "status", None)
        return f"`raw.status` {status}, text {text}"
    choices = raw.get("choices") if isinstance(raw, dict) else getattr(raw, "choices", None)
    first = choices[0] if choices else None
    reason = first.get("finish_reason") if isinstance(first, dict) else getattr(first, "finish_reason", None)
    return f"`raw.choices[0].finish_reason` {reason}, text {text}"


def chat(base, kind, responses, stream=False) -> Outcome:
    llm = _llm(base, kind, responses)
    if kind.tool:
        response = llm.chat_with_tools([TOOL], user_msg=kind.prompt)
        calls = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
        tool = "; ".join(f"`get_tool_calls_from_response`: `tool_kwargs` {c.tool_kwargs}" for c in calls) or "no call"
        return Outcome(says=_said(response, responses), tool=tool)
    messages = [ChatMessage(role="user", content=kind.prompt)]
    if stream:
        *_, last = llm.stream_chat(messages)
        return Outcome(says=_said(last, responses), stream="parses")
    return Outcome(says=_said(llm.chat(messages), responses))


CALLS = (
    Call("`OpenAIResponses.chat` / `chat_with_tools`", lambda base, kind: chat(base, kind, True)),
    Call(
        "`OpenAIResponses.stream_chat`",
        lambda base, kind: chat(base, kind, True, True),
        True,
        kinds=("cut text", "finished"),
    ),
    Call("`OpenAI.chat` / `chat_with_tools`", lambda base, kind: chat(base, kind, False)),
)
