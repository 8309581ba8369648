"""A corpus of real clients, unmodified: no selection header, no scenario name as the model.

Each client sends what it always sends; mockllama must reach the intended recording by matching
alone, in every behaviour. The scenario is read from the X-Mockllama-Scenario header of the reply
mockllama sent (tests/support/observed.py).
"""

from __future__ import annotations

import asyncio
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm would fetch a price list

COUNT = "Count from 1 to 200, separated by spaces."
BEHAVIOURS = ("buggy", "fixed", "spec")
# text-cut-8's recorded reply, whatever client asked
CUT_TEXT = "1. 1\n2. "


def _matched(replies, scenario: str, count: int = 1) -> None:
    assert [r["status"] for r in replies.replies] == [200] * count, replies.replies
    assert replies.scenarios() == [scenario] * count
    assert {r["selected_by"] for r in replies.replies} == {"match"}


def _responses_status(behaviour: str) -> str:
    return "completed" if behaviour == "buggy" else "incomplete"


# --- the openai SDK -----------------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
@pytest.mark.parametrize(
    "given",
    [
        COUNT,
        [{"role": "user", "content": COUNT}],
        [{"role": "user", "content": [{"type": "input_text", "text": COUNT}]}],
    ],
    ids=["string", "message-list", "input_text-parts"],
)
def test_openai_sdk_responses_sync(replies, behaviour, given):
    import openai

    client = openai.OpenAI(base_url=replies.base_url(behaviour), api_key="unused")
    response = client.responses.create(model="gpt-4o-mini", input=given, max_output_tokens=8, temperature=0)
    assert response.status == _responses_status(behaviour)
    assert response.output_text == CUT_TEXT
    _matched(replies, "text-cut-8")


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
@pytest.mark.parametrize("given", [COUNT, [{"role": "user", "content": COUNT}]], ids=["string", "message-list"])
def test_openai_sdk_responses_async(replies, behaviour, given):
    import openai

    async def ask():
        async with openai.AsyncOpenAI(base_url=replies.base_url(behaviour), api_key="unused") as client:
            return await client.responses.create(model="gpt-4o-mini", input=given, max_output_tokens=8, temperature=0)

    response = asyncio.run(ask())
    assert response.status == _responses_status(behaviour)
    _matched(replies, "text-cut-8")


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_openai_sdk_chat_with_max_completion_tokens(replies, behaviour):
    import openai

    client = openai.OpenAI(base_url=replies.base_url(behaviour), api_key="unused")
    completion = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": COUNT}], max_completion_tokens=8, temperature=0
    )
    assert completion.choices[0].finish_reason == "length"
    _matched(replies, "text-cut-8")


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_openai_sdk_chat_async(replies, behaviour):
    import openai

    async def ask():
        async with openai.AsyncOpenAI(base_url=replies.base_url(behaviour), api_key="unused") as client:
            return await client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": COUNT}], max_tokens=8, temperature=0.0
            )

    assert asyncio.run(ask()).choices[0].finish_reason == "length"
    _matched(replies, "text-cut-8")


# --- openai-agents ------------------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_openai_agents_runner_with_responses_model(replies, behaviour):
    import openai
    from agents import Agent, ModelSettings, OpenAIResponsesModel, Runner, set_tracing_disabled
    from agents.exceptions import ModelBehaviorError

    set_tracing_disabled(True)

    async def run():
        client = openai.AsyncOpenAI(base_url=replies.base_url(behaviour), api_key="unused")
        agent = Agent(
            name="counter",
            model=OpenAIResponsesModel(model="gpt-4o-mini", openai_client=client),
            model_settings=ModelSettings(max_tokens=8, temperature=0),
        )
        return await Runner.run(agent, COUNT)

    if behaviour == "buggy":  # llama-server's "completed": the agent takes half an answer for a whole one
        assert asyncio.run(run()).final_output == CUT_TEXT
    else:  # the corrected status: the agent sees the cut and stops
        with pytest.raises(ModelBehaviorError, match="incomplete"):
            asyncio.run(run())
    _matched(replies, "text-cut-8")


# --- LangChain ----------------------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
@pytest.mark.parametrize("responses_api", [True, False], ids=["responses", "chat"])
def test_langchain_chat_openai(replies, behaviour, responses_api):
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(
        base_url=replies.base_url(behaviour),
        api_key="unused",
        model="gpt-4o-mini",
        use_responses_api=responses_api,
        max_tokens=8,
        temperature=0,
    )
    message = model.invoke(COUNT)
    assert message.text == CUT_TEXT
    _matched(replies, "text-cut-8")


# --- litellm ------------------------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_litellm_completion(replies, behaviour):
    import litellm

    response = litellm.completion(
        model="openai/gpt-4o-mini",
        api_base=replies.base_url(behaviour),
        api_key="unused",
        messages=[{"role": "user", "content": COUNT}],
        max_tokens=8,
        temperature=0,
    )
    assert response.choices[0].finish_reason == "length"
    _matched(replies, "text-cut-8")


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_litellm_responses(replies, behaviour):
    """litellm raises a max_output_tokens under 16 to 16, so the 64-token recording is asked for."""
    import litellm

    response = litellm.responses(
        model="openai/gpt-4o-mini",
        api_base=replies.base_url(behaviour),
        api_key="unused",
        input=COUNT,
        max_output_tokens=64,
        temperature=0,
    )
    assert response.status == _responses_status(behaviour)
    _matched(replies, "text-cut-64")
