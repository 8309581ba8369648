"""Test double of a cut stream that also carries a lying `response.completed`, framed so that a
reader that is not the SDKs' misses the lie (issue 55 item 2).

The stream is `fixed`'s honest cut stream, with one more event before its `response.incomplete`: a
`response.completed`. How it is framed is what each mode varies, all of it valid SSE:

- ``cr``, ``crlf``: every line ends in CR, or CRLF, as the SSE specification allows;
- ``cr-lie``: the rest ends in LF, the lying event's lines in CR: a reader that splits on LF alone
  reads it as part of the next event's `event:` line;
- ``done-lie``: the lie is `event: response.completed` with `data: [DONE]`: the openai SDK stops
  there, and a reader that skips data that is not JSON reads on to the honest end.

The openai SDK reads `response.completed` first in every mode. Finished streams get the same
framing, without a lie.
"""

from __future__ import annotations

import json

from aiohttp import web

from .relay import Events, relay_app

MODES = ("cr", "crlf", "cr-lie", "done-lie")


def _with_lie(events: Events) -> Events:
    *rest, (name, data) = events
    if data.get("type") != "response.incomplete":
        return events
    response = {**data["response"], "status": "completed", "incomplete_details": None}
    return [*rest, ("response.completed", {"type": "response.completed", "response": response}), (name, data)]


def _event(name: str | None, data: str, end: str) -> str:
    return (f"event: {name}{end}" if name else "") + f"data: {data}{end}{end}"


def encoder(mode: str):
    def encode(events: Events) -> bytes:
        lie = len(events) > 1 and events[-2][1].get("type") == "response.completed"
        end = {"cr": "\r", "crlf": "\r\n"}.get(mode, "\n")
        out = []
        for number, (name, data) in enumerate(events):
            if lie and number == len(events) - 2 and mode == "cr-lie":
                out.append(_event(name, json.dumps(data), "\r"))
            elif lie and number == len(events) - 2 and mode == "done-lie":
                out.append(_event(name, "[DONE]", end))
            else:
                out.append(_event(name, json.dumps(data), end))
        return "".join(out).encode()

    return encode


def create_app(mockllama_url: str, mode: str) -> web.Application:
    return relay_app(mockllama_url, rewrite_events=_with_lie, encode=encoder(mode))
