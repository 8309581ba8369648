"""openai-agents: ``Runner.run`` and ``Runner.run_streamed`` with a function tool, on the Responses
model and the chat model."""

from __future__ import annotations

import asyncio

import openai
from agents import (
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from harness import Call, Outcome, ran, shown, write_file

CLIENT = "openai-agents"
PACKAGES = ("openai-agents",)  # named with their versions on the page
CHECK = """On a correct server the Responses model raises `ModelBehaviorError` for a cut reply; on
llama-server it returns the cut text as `final_output`, and with a cut call whose arguments parse
it runs the tool. The chat model never reads `finish_reason: "length"`: it returns the cut text in
every behaviour. Check `result.raw_responses[-1].usage.output_tokens` against `max_tokens`, and
catch `ModelBehaviorError` as the cut it is."""
set_tracing_disabled(True)  # tracing would post to OpenAI
TOOL = function_tool(write_file)


def _agent(base, kind, chat: bool) -> Agent:
    client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
    model = (
        OpenAIChatCompletionsModel(model=kind.model("gpt-4o-mini"), openai_client=client)
        if chat
        else OpenAIResponsesModel(model=kind.model("gpt-4o-mini"), openai_client=client)
    )
    settings = ModelSettings(max_tokens=kind.limit, temperature=0)
    return Agent(name="assistant", model=model, tools=[TOOL] if kind.tool else [], model_settings=settings)


def _said(result, kind) -> Outcome:
    return Outcome(says=f"`final_output` {shown(result.final_output)}", tool=ran() if kind.tool else "-")


def run(base, kind, chat=False) -> Outcome:
    return _said(asyncio.run(Runner.run(_agent(base, kind, chat), kind.prompt, max_turns=3)), kind)


def run_streamed(base, kind) -> Outcome:
    async def go():
        result = Runner.run_streamed(_agent(base, kind, False), kind.prompt, max_turns=3)
        async for _ in result.stream_events():
            pass
        return result

    outcome = _said(asyncio.run(go()), kind)
    outcome.stream = "parses"
    return outcome


CALLS = (
    Call("`Runner.run`, Responses model", run, runs_tools=True),
    Call("`Runner.run_streamed`, Responses model", run_streamed, streams=True, runs_tools=True),
    Call("`Runner.run`, chat model", lambda base, kind: run(base, kind, chat=True), runs_tools=True),
)
