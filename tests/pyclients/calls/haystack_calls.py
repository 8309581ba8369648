"""haystack: ``OpenAIResponsesChatGenerator`` and ``OpenAIChatGenerator`` (``run``, and with a
``streaming_callback``), and the ``Agent`` that runs their tool calls."""

from __future__ import annotations

from harness import Call, Outcome, ran, shown, write_file
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import create_tool_from_function
from haystack.utils import Secret

CLIENT = "haystack"
PACKAGES = ("haystack-ai",)  # named with their versions on the page
CHECK = """`meta["finish_reason"]` is `"length"` for a cut reply from a correct server and from llama-server's chat; the
Responses generator gives llama-server's cut reply `"stop"` (text) or `"tool_calls"`. A call
whose arguments do not parse is dropped with a warning. With a `streaming_callback`, the Responses
generator cannot read llama-server's stream of a call (`ValueError` everywhere but `spec`). The
`Agent` asks again after a dropped call, up to `max_agent_steps`, on llama-server; a cut call whose
arguments parse runs in every behaviour. Check `meta["finish_reason"]` and `meta["usage"]`."""
TOOL = create_tool_from_function(write_file)


def _generator(base, kind, responses: bool, stream: bool = False):
    common = {
        "api_key": Secret.from_token("unused"),
        "model": kind.model("gpt-4o-mini"),
        "api_base_url": f"{base}/v1",
        "max_retries": 0,
        "streaming_callback": (lambda chunk: None) if stream else None,
    }
    if responses:
        return OpenAIResponsesChatGenerator(
            generation_kwargs={"max_output_tokens": kind.limit, "temperature": 0}, **common
        )
    return OpenAIChatGenerator(generation_kwargs={"max_completion_tokens": kind.limit, "temperature": 0}, **common)


def _said(reply, responses: bool) -> str:
    meta = reply.meta
    if responses:
        return f"`meta['status']` {meta.get('status')}, `meta['finish_reason']` {meta.get('finish_reason')}"
    return f"`meta['finish_reason']` {meta.get('finish_reason')}"


def run(base, kind, responses, stream=False) -> Outcome:
    tools = {"tools": [TOOL]} if kind.tool else {}
    reply = _generator(base, kind, responses, stream).run([ChatMessage.from_user(kind.prompt)], **tools)["replies"][0]
    calls = reply.tool_calls
    tool = "; ".join(f"`tool_calls`, `arguments` {c.arguments}" for c in calls) or "no call"
    outcome = Outcome(says=_said(reply, responses), tool=tool if kind.tool else "-")
    if stream:
        outcome.stream = "parses"
    return outcome


def agent(base, kind) -> Outcome:
    runner = Agent(chat_generator=_generator(base, kind, True), tools=[TOOL] if kind.tool else [], max_agent_steps=3)
    runner.warm_up()
    messages = runner.run(messages=[ChatMessage.from_user(kind.prompt)])["messages"]
    last = messages[-1]
    said = f"last message {last.role.value} {shown(last.text or '')}, {_said(last, True)}"
    return Outcome(says=said, tool=ran() if kind.tool else "-")


CALLS = (
    Call("`OpenAIResponsesChatGenerator.run`", lambda base, kind: run(base, kind, True)),
    Call("`OpenAIResponsesChatGenerator`, `streaming_callback`", lambda base, kind: run(base, kind, True, True), True),
    Call("`OpenAIChatGenerator.run`", lambda base, kind: run(base, kind, False)),
    Call("`OpenAIChatGenerator`, `streaming_callback`", lambda base, kind: run(base, kind, False, True), True),
    Call("`Agent.run`, Responses generator", agent, runs_tools=True),
)
