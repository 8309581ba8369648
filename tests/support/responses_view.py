"""What a /v1/responses reply says about how generation ended, without ids, times, usage and timings.

Shared by the offline and live comparisons of `fixed` with the patched llama-server.
"""

from __future__ import annotations

import json

from mockllama.wire import sse


def _item(item: dict) -> tuple:
    texts = [part.get("text") for part in item.get("content") or []]
    return item.get("type"), item.get("status"), texts, item.get("arguments")


def responses_view(body: bytes) -> dict:
    if not sse.is_event_stream(body):
        data = json.loads(body)
        return {
            "status": data["status"],
            "incomplete_details": data.get("incomplete_details"),
            "items": [_item(item) for item in data["output"]],
        }
    events = sse.parse_stream(body)
    payloads = [event.json() for event in events]
    terminal = payloads[-1]["response"]
    items_done = [index for index, p in enumerate(payloads) if p["type"] == "response.output_item.done"]
    arguments_done = [index for index, p in enumerate(payloads) if p["type"] == "response.function_call_arguments.done"]
    return {
        "event lines": [event.name for event in events],
        "every event line equals its type": all(event.name == p["type"] for event, p in zip(events, payloads)),
        # each arguments.done names the function call whose output_item.done comes right after it
        "arguments.done precede their item": all(
            payloads[index + 1]["type"] == "response.output_item.done"
            and payloads[index + 1]["item"]["id"] == payloads[index]["item_id"]
            for index in arguments_done
        ),
        "arguments.done": [(payloads[i]["name"], payloads[i]["arguments"]) for i in arguments_done],
        "output_item.done": [_item(payloads[i]["item"]) for i in items_done],
        "output_text.done": [p["text"] for p in payloads if p["type"] == "response.output_text.done"],
        "text deltas": "".join(p["delta"] for p in payloads if p["type"] == "response.output_text.delta"),
        "argument deltas": "".join(
            p["delta"] for p in payloads if p["type"] == "response.function_call_arguments.delta"
        ),
        "status": terminal["status"],
        "incomplete_details": terminal.get("incomplete_details"),
        "items": [_item(item) for item in terminal["output"]],
    }
