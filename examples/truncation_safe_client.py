"""A /v1/responses client that notices cut-off replies, even on servers that say "completed".

llama-server (b11434 and others) reports every reply as ``status: "completed"``, even one cut
off by ``max_output_tokens``, and other servers have their own ways of saying so (Ollama,
vLLM, LocalAI, SGLang, inspect_ai, aimock: docs/variants.md). This client decides "cut off"
with four rules, in order:

1. ``status == "incomplete"``: what a correct server says (vLLM and aimock too);
2. otherwise ``incomplete_details`` set: a reason given whatever the status says (inspect_ai
   sends ``status: null`` with it, and its stream "completed" around it);
3. otherwise ``usage.output_tokens >= max_output_tokens``: the one signal llama-server keeps
   (and Ollama, LocalAI, SGLang);
4. otherwise a function_call whose arguments do not parse as JSON.

A stream is judged by the response its terminal event carries, whatever that event is called:
vLLM, aimock and inspect_ai end a cut stream with ``response.completed`` around an incomplete
response (or a reason). ``response.incomplete`` is a cut, and a stream that ends without a
terminal event was cut on the way, however cleanly the connection closed. A reply that never
arrives whole (a dropped connection, a timeout, a body that is not JSON, an HTTP error) is never
taken for an answer: ``cut_off`` is true and ``reason`` says what happened.

Known limits, both shown by real recordings (mockllama scenarios):

- ``text-exact-limit``: a reply can finish in exactly ``max_output_tokens`` tokens, so rule 3
  flags it although it is whole (a false positive; the chat twin says ``stop``).
- ``tool-cut-30``: arguments can parse as JSON and still be cut (``{"path": ..., "content":
  "Hello, world!"}`` before the model closed the call), so rule 4 alone is not proof of a
  finished call; rule 3 is what catches it.

When a reply was cut off, :func:`ask_until_complete` asks again with twice the limit, until the
reply is complete (or a ceiling is reached). Against llama-server's ``buggy`` replies only rule 3
can start that retry: the status always says ``completed``.

Run it against mockllama:  python examples/truncation_safe_client.py http://127.0.0.1:18090/buggy/v1
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import openai

# A prompt mockllama has recorded at 8, 16 and 32 tokens (ladder-cut-8, ladder-cut-16, ladder-finishes).
LADDER_PROMPT = "Write one sentence about the sea."


TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


@dataclass
class Answer:
    response: object  # openai.types.responses.Response; None when no whole reply arrived
    cut_off: bool  # True: do not use this as a whole answer
    reason: str  # which rule decided, or what went wrong, in words
    max_output_tokens: int | None = None  # the limit asked for


def status_says_incomplete(response) -> bool:
    return response.status == "incomplete"


def incomplete_details_given(response) -> bool:
    return response.incomplete_details is not None


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
        return Answer(response, True, "status is 'incomplete'", max_output_tokens)
    if incomplete_details_given(response):
        reason = response.incomplete_details.reason
        return Answer(response, True, f"incomplete_details gives the reason {reason!r}", max_output_tokens)
    if usage_reached_limit(response, max_output_tokens):
        return Answer(
            response, True, f"usage.output_tokens reached max_output_tokens={max_output_tokens}", max_output_tokens
        )
    if unparsable_function_call(response):
        return Answer(response, True, "a function_call's arguments do not parse as JSON", max_output_tokens)
    return Answer(response, False, f"status is {response.status!r} and no rule fired", max_output_tokens)


def failed(err: Exception, max_output_tokens: int | None = None) -> Answer:
    """No whole reply arrived: say what happened instead."""
    if isinstance(err, openai.APITimeoutError):
        reason = "the server stalled past the client's timeout"
    elif isinstance(err, openai.APIConnectionError):
        reason = "the connection dropped before the reply was whole"
    elif isinstance(err, openai.APIStatusError):
        reason = f"the server answered HTTP {err.status_code}: {err.message}"
    else:
        reason = f"the reply is not valid JSON ({err})"
    return Answer(None, True, reason, max_output_tokens)


def ask(client: openai.OpenAI, **request) -> Answer:
    """``client.responses.create(**request)``, judged."""
    try:
        response = client.responses.create(**request)
    except (openai.APIError, ValueError) as err:  # ValueError: the body was cut mid-JSON
        return failed(err, request.get("max_output_tokens"))
    return judge(response, request.get("max_output_tokens"))


def ask_streaming(client: openai.OpenAI, **request) -> Answer:
    """``client.responses.create(stream=True, **request)``, judged by the stream's terminal event."""
    last = None
    try:
        for event in client.responses.create(**{**request, "stream": True}):
            last = event
    except (openai.APIError, ValueError) as err:
        return failed(err, request.get("max_output_tokens"))
    if last is None or last.type not in TERMINAL_EVENTS:
        seen = last.type if last is not None else "no event"
        return Answer(None, True, f"the stream ended without a terminal event (last: {seen})")
    if last.type == "response.failed":
        return Answer(last.response, True, "the server reported the response as failed")
    # What the response inside says decides, not the event's name: vLLM, aimock and inspect_ai end a
    # cut stream with response.completed. A response.incomplete is a cut whatever its response says.
    answer = judge(last.response, request.get("max_output_tokens"))
    if last.type == "response.incomplete" and not answer.cut_off:
        return Answer(last.response, True, "the stream ended with response.incomplete", answer.max_output_tokens)
    return answer


def limits_doubling(first: int, ceiling: int):
    """first, 2 x first, 4 x first, ... up to ceiling (which is always the last one tried)."""
    limit = first
    while limit < ceiling:
        yield limit
        limit *= 2
    yield ceiling


def ask_until_complete(client: openai.OpenAI, limits, **request) -> list[Answer]:
    """Ask at each limit in turn until a reply is not cut off; every attempt, in order.

    ``limits`` is any sequence of increasing limits, e.g. ``limits_doubling(8, 1024)``. The last
    answer is the complete one, unless the last limit was reached first (check its ``cut_off``).
    """
    attempts = []
    for limit in limits:
        attempts.append(ask(client, **request, max_output_tokens=limit))
        if not attempts[-1].cut_off:
            break
    return attempts


def main(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="unused")
    answer = ask(
        client, model="x", input="Count from 1 to 200, separated by spaces.", max_output_tokens=8, temperature=0
    )
    if answer.response is None:
        print(f"no whole reply: {answer.reason}")
        return
    print(f"status={answer.response.status!r} cut_off={answer.cut_off} ({answer.reason})")
    print(repr(answer.response.output_text))
    attempts = ask_until_complete(client, limits_doubling(8, 1024), model="x", input=LADDER_PROMPT, temperature=0)
    for attempt in attempts:
        print(
            f"max_output_tokens={attempt.max_output_tokens}: status={attempt.response.status!r} "
            f"cut_off={attempt.cut_off} "
            f"({attempt.reason})"
        )
    print(repr(attempts[-1].response.output_text))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:18090/buggy/v1")
