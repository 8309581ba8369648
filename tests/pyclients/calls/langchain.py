"""LangChain: ``ChatOpenAI`` with ``use_responses_api=True`` and without, ``invoke`` and ``stream``,
the tool bound with ``bind_tools``."""

from __future__ import annotations

from functools import reduce

from harness import Call, Outcome, write_file
from langchain_openai import ChatOpenAI

CLIENT = "LangChain"
PACKAGES = ("langchain-openai", "langchain-core")  # named with their versions on the page
CHECK = """Responses: `response_metadata["status"]` (and `incomplete_details`); chat:
`response_metadata["finish_reason"]`. `invoke` puts a call whose arguments do not parse in
`invalid_tool_calls`, but `stream` repairs them into `tool_calls` (`{"path": "/tmp/hello.txt`
becomes `{'path': '/tmp/hello.txt'}`) in every behaviour: before running `tool_calls`, check the
status or `finish_reason`, and `usage_metadata["output_tokens"]` against `max_tokens`."""


def _model(base, kind, responses: bool):
    model = ChatOpenAI(
        base_url=f"{base}/v1",
        api_key="unused",
        model=kind.model("gpt-4o-mini"),
        use_responses_api=responses,
        max_tokens=kind.limit,
        temperature=0,
        max_retries=0,
    )
    return model.bind_tools([write_file]) if kind.tool else model


def _tool(message) -> str:
    if message.tool_calls:
        return f"in `tool_calls`: {message.tool_calls[0]['args']}"
    if message.invalid_tool_calls:
        return "in `invalid_tool_calls`"
    return "no call"


def _said(message, responses: bool) -> str:
    meta = message.response_metadata
    if responses:
        details = meta.get("incomplete_details")
        reason = f" ({details.get('reason')})" if details else ""
        status = meta["status"] if "status" in meta else "absent"  # dropped when the reply's is null
        return f"`response_metadata['status']` {status}{reason}"
    return f"`response_metadata['finish_reason']` {meta.get('finish_reason')}"


def invoke(base, kind, responses) -> Outcome:
    message = _model(base, kind, responses).invoke(kind.prompt)
    return Outcome(says=_said(message, responses), tool=_tool(message) if kind.tool else "-")


def stream(base, kind, responses) -> Outcome:
    message = reduce(lambda a, b: a + b, _model(base, kind, responses).stream(kind.prompt))
    return Outcome(says=_said(message, responses), stream="parses", tool=_tool(message) if kind.tool else "-")


CALLS = (
    Call("`invoke`, `use_responses_api=True`", lambda base, kind: invoke(base, kind, True)),
    Call("`stream`, `use_responses_api=True`", lambda base, kind: stream(base, kind, True), streams=True),
    Call("`invoke`, chat", lambda base, kind: invoke(base, kind, False)),
    Call("`stream`, chat", lambda base, kind: stream(base, kind, False), streams=True),
)
