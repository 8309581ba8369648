"""Reasoning text framed as the OpenAI Responses wire format frames it, for the ``spec`` behaviour.

llama-server streams a reasoning item as ``response.output_item.added``, then
``response.reasoning_text.delta`` events that carry only ``delta`` and ``item_id``, then
``response.output_item.done``. The OpenAI format holds the text in one content part of the item:
``response.content_part.added`` (an empty ``reasoning_text`` part) before the first delta, and
``response.reasoning_text.done`` then ``response.content_part.done`` (the whole text) before the
item's ``response.output_item.done``. This module adds those events and nothing else; ``spec``
numbers and indexes every event afterwards. The text is the recorded deltas, joined.
"""

from __future__ import annotations

from mockllama.wire import sse

DELTA = "response.reasoning_text.delta"


def _event(payload: dict) -> sse.Event:
    return sse.make_event(payload["type"], payload)


def _part(text: str) -> dict:
    return {"type": "reasoning_text", "text": text}


def _closing_events(item_id: str, text: str) -> list[sse.Event]:
    return [
        _event({"type": "response.reasoning_text.done", "item_id": item_id, "text": text}),
        _event({"type": "response.content_part.done", "item_id": item_id, "part": _part(text)}),
    ]


def frame_reasoning_text(events: tuple[sse.Event, ...]) -> tuple[sse.Event, ...]:
    texts: dict[str, str] = {}  # reasoning text streamed so far, by item id
    framed: list[sse.Event] = []
    for event in events:
        payload = event.json()
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind == DELTA:
            item_id = payload.get("item_id")
            if item_id not in texts:
                texts[item_id] = ""
                framed.append(_event({"type": "response.content_part.added", "item_id": item_id, "part": _part("")}))
            texts[item_id] += payload.get("delta") or ""
        elif kind == "response.output_item.done":
            item = payload.get("item") or {}
            if item.get("type") == "reasoning" and item.get("id") in texts:
                framed += _closing_events(item["id"], texts.pop(item["id"]))
        framed.append(event)
    return tuple(framed)
