"""A /v1/responses client that notices cut-off replies, even on servers that say "completed".

llama-server (b11434 and others) reports every reply as ``status: "completed"``, even one cut
off by ``max_output_tokens``. This client decides "cut off" with three rules, in order:

1. ``status == "incomplete"``: what a correct server says;
2. otherwise ``usage.output_tokens >= max_output_tokens``: the one signal llama-server keeps;
3. otherwise a function_call whose arguments do not parse as JSON.

A stream is judged by its terminal event: ``response.incomplete`` is a cut, ``response.completed``
is judged by the rules above, and a stream that ends with neither was cut on the way, however
cleanly the connection closed. A reply that never arrives whole (a dropped connection, a timeout,
a body that is not JSON, an HTTP error) is never taken for an answer: ``cut_off`` is true and
``reason`` says what happened.

Known limits, both shown by real recordings (mockllama scenarios):

- ``text-exact-limit``: a reply can finish in exactly ``max_output_tokens`` tokens, so rule 2
  flags it although it is whole (a false positive; the chat twin says ``stop``).
- ``tool-cut-30``: arguments can parse as JSON and still be cut (``{"path": ..., "content":
  "Hello, world!"}`` before the model closed the call), so rule 3 alone is not proof of a
  finished call; rule 2 is what catches it.

Run it against mockllama:  python examples/truncation_safe_client.py http://127.0.0.1:18090/buggy/v1
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import openai


TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


@dataclass
class Answer:
    response: object  # openai.types.responses.Response; None when no whole reply arrived
    cut_off: bool  # True: do not use this as a whole answer
    reason: str  # which rule decided, or what went wrong, in words


def status_says_incomplete(response) -> bool:
    return response.status == "incomplete"


def usage_reached_limit(response, max_output_tokens: int | None) -> bool:
    usage = response.usage
    return max_output_tokens is not None and usage is not None and usage.output_tokens >= max_output_tokens


def unparsable_function_call(response) -> bool:
    for item in response.output:
        if item.type == "function_call":
            try:
                json.loads(item.arguments)
            except ValueError:
                return True
    return False


def judge(response, max_output_tokens: int | None) -> Answer:
    """Was this reply cut off? The first rule that fires decides."""
    if status_says_incomplete(response):
        return Answer(response, True, "status is 'incomplete'")
    if usage_reached_limit(response, max_output_tokens):
        return Answer(response, True, f"usage.output_tokens reached max_output_tokens={max_output_tokens}")
    if unparsable_function_call(response):
        return Answer(response, True, "a function_call's arguments do not parse as JSON")
    return Answer(response, False, f"status is {response.status!r} and no rule fired")


def failed(err: Exception) -> Answer:
    """No whole reply arrived: say what happened instead."""
    if isinstance(err, openai.APITimeoutError):
        return Answer(None, True, "the server stalled past the client's timeout")
    if isinstance(err, openai.APIConnectionError):
        return Answer(None, True, "the connection dropped before the reply was whole")
    if isinstance(err, openai.APIStatusError):
        return Answer(None, True, f"the server answered HTTP {err.status_code}: {err.message}")
    return Answer(None, True, f"the reply is not valid JSON ({err})")


def ask(client: openai.OpenAI, **request) -> Answer:
    """``client.responses.create(**request)``, judged."""
    try:
        response = client.responses.create(**request)
    except (openai.APIError, ValueError) as err:  # ValueError: the body was cut mid-JSON
        return failed(err)
    return judge(response, request.get("max_output_tokens"))


def ask_streaming(client: openai.OpenAI, **request) -> Answer:
    """``client.responses.create(stream=True, **request)``, judged by the stream's terminal event."""
    last = None
    try:
        for event in client.responses.create(**{**request, "stream": True}):
            last = event
    except (openai.APIError, ValueError) as err:
        return failed(err)
    if last is None or last.type not in TERMINAL_EVENTS:
        seen = last.type if last is not None else "no event"
        return Answer(None, True, f"the stream ended without a terminal event (last: {seen})")
    if last.type == "response.failed":
        return Answer(last.response, True, "the server reported the response as failed")
    return judge(last.response, request.get("max_output_tokens"))


def main(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="unused")
    answer = ask(client, model="x", input="Count from 1 to 200, separated by spaces.", max_output_tokens=8,
                 temperature=0)
    if answer.response is None:
        print(f"no whole reply: {answer.reason}")
        return
    print(f"status={answer.response.status!r} cut_off={answer.cut_off} ({answer.reason})")
    print(repr(answer.response.output_text))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:18090/buggy/v1")
