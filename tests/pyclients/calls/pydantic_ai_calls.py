"""pydantic-ai: ``Agent.run`` and ``Agent.run_stream`` on the Responses model and the chat model, with
the tool as a plain function."""

from __future__ import annotations

import asyncio

from harness import Call, Outcome, ran, shown, write_file
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

CLIENT = "pydantic-ai"
PACKAGES = ("pydantic-ai-slim",)  # named with their versions on the page
CHECK = """`result.response.finish_reason` is `"length"` for a cut reply from a correct server and from
llama-server's chat, `"stop"` from llama-server's Responses reply. A cut call whose arguments do not parse raises
`IncompleteToolCall` when the reply says it was cut, and otherwise a retry error; a cut call whose
arguments parse runs, in every behaviour. Check `finish_reason` and `usage.output_tokens`
before trusting `output`."""


def _agent(base, kind, chat: bool) -> Agent:
    provider = OpenAIProvider(base_url=f"{base}/v1", api_key="unused")
    name = kind.model("gpt-4o-mini")
    model = OpenAIChatModel(name, provider=provider) if chat else OpenAIResponsesModel(name, provider=provider)
    settings = {"max_tokens": kind.limit, "temperature": 0}
    return Agent(model, tools=[write_file] if kind.tool else [], model_settings=settings, retries=0)


def _said(output, response, kind) -> Outcome:
    reason = getattr(response, "finish_reason", None)
    return Outcome(says=f"`output` {shown(output)}, `finish_reason` {reason}", tool=ran() if kind.tool else "-")


def run(base, kind, chat) -> Outcome:
    result = asyncio.run(_agent(base, kind, chat).run(kind.prompt))
    return _said(result.output, result.response, kind)


def run_stream(base, kind, chat) -> Outcome:
    async def go():
        async with _agent(base, kind, chat).run_stream(kind.prompt) as result:
            output = await result.get_output()
            return output, result.response

    outcome = _said(*asyncio.run(go()), kind)
    outcome.stream = "parses"
    return outcome


CALLS = (
    Call("`run`, Responses model", lambda base, kind: run(base, kind, False), runs_tools=True),
    Call("`run_stream`, Responses model", lambda base, kind: run_stream(base, kind, False), True, True),
    Call("`run`, chat model", lambda base, kind: run(base, kind, True), runs_tools=True),
    Call("`run_stream`, chat model", lambda base, kind: run_stream(base, kind, True), True, True),
)
