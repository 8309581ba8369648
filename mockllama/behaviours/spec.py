"""The ``spec`` behaviour: the ``fixed`` correction, sent in the OpenAI Responses wire format.

llama-server's stream events carry no ``sequence_number``, ``output_index`` or ``content_index``,
and its response objects lack fields the official SDKs require, so the ``openai`` SDK's
``responses.stream()`` helper crashes on them. ``spec`` adds that structure, as the Open
Responses specification (its OpenAPI document, vendored in ``tests/support/openresponses/``) defines it.
Text, arguments, usage numbers, ids and timestamps still come from the recording; the settings a
response object reports come from the request (``echo``: the recorded request here, the sent one
per request). llama-server's own extra ``timings`` field is left out, being no part of the format.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from mockllama.behaviours.echo import echo, request_settings
from mockllama.behaviours.fixed import corrects, fixed
from mockllama.behaviours.reasoning import frame_reasoning_text
from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.reply import Reply
from mockllama.recordings.cassettes import Interaction, Scenario
from mockllama.wire import sse

LIFECYCLE_EVENTS = ("response.created", "response.in_progress")
TERMINAL_EVENTS = ("response.completed", "response.incomplete")
CONTENT_EVENTS = (
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
)
TEXT_EVENTS = ("response.output_text.delta", "response.output_text.done")


def full_usage(usage: dict | None) -> dict | None:
    """llama-server's usage with the detail objects the Responses format requires."""
    if usage is None:
        return None
    input_details = {"cached_tokens": 0, "cache_write_tokens": 0, **(usage.get("input_tokens_details") or {})}
    output_details = {"reasoning_tokens": 0, **(usage.get("output_tokens_details") or {})}
    return {
        "input_tokens": usage["input_tokens"],
        "input_tokens_details": input_details,
        "output_tokens": usage["output_tokens"],
        "output_tokens_details": output_details,
        "total_tokens": usage["total_tokens"],
    }


def full_part(part: dict) -> dict:
    return {"annotations": [], "logprobs": [], **part} if part.get("type") == "output_text" else dict(part)


def _full_message(item: dict) -> dict:
    return {**item, "content": [full_part(part) for part in item.get("content", [])]}


def _full_reasoning(item: dict) -> dict:
    # llama-server's streamed reasoning items carry no status. A cut item already says
    # "incomplete" (fixed); any other one was finished before the reply ended.
    return {**item, "status": item.get("status", "completed")}


# Item type -> how an output item of that type is completed; types not listed are sent as recorded.
ITEM_SHAPERS: dict[object, Callable[[dict], dict]] = {"message": _full_message, "reasoning": _full_reasoning}


def full_item(item: dict) -> dict:
    shape = ITEM_SHAPERS.get(item.get("type"))
    return shape(item) if shape is not None else dict(item)


def response_object(recorded: dict, request: dict, **changes) -> dict:
    """A complete Responses object: what was generated from the recording, the settings from the
    request (``echo.request_settings``), nothing invented. The field order is the document's."""
    status = recorded.get("status")
    completed_at = recorded.get("completed_at", recorded.get("created_at")) if status == "completed" else None
    settings = request_settings(request)
    response = {
        "id": recorded["id"],
        "object": "response",
        "created_at": recorded["created_at"],
        "completed_at": completed_at,
        "status": status,
        "incomplete_details": recorded.get("incomplete_details"),
        "model": recorded["model"],
        "previous_response_id": settings.pop("previous_response_id"),
        "instructions": settings.pop("instructions"),
        "output": [full_item(item) for item in recorded.get("output", [])],
        "error": None,
        **settings,
        "usage": full_usage(recorded.get("usage")),
    }
    response.update(changes)
    return response


class _StreamPositions:
    """Which output item, and which content part of it, each event belongs to."""

    def __init__(self):
        self.output_index: dict[str, int] = {}
        self.parts: dict[str, int] = {}

    def add_item(self, item_id: str) -> int:
        self.output_index[item_id] = len(self.output_index)
        return self.output_index[item_id]

    def add_part(self, item_id: str) -> int:
        self.parts[item_id] = self.parts.get(item_id, -1) + 1
        return self.parts[item_id]


def _spec_payload(payload: dict, positions: _StreamPositions, terminal: dict, request: dict) -> dict:
    kind = payload["type"]
    if kind in LIFECYCLE_EVENTS:
        return {
            "type": kind,
            "response": response_object(
                terminal,
                request,
                status="in_progress",
                incomplete_details=None,
                completed_at=None,
                output=[],
                usage=None,
            ),
        }
    if kind in TERMINAL_EVENTS:
        return {"type": kind, "response": response_object(payload["response"], request)}
    payload = dict(payload)
    if kind == "response.output_item.added":
        payload["output_index"] = positions.add_item(payload["item"]["id"])
    if "item" in payload:
        payload["item"] = full_item(payload["item"])
        payload["output_index"] = positions.output_index.get(payload["item"].get("id"), 0)
    if "item_id" in payload:
        payload["output_index"] = positions.output_index.get(payload["item_id"], 0)
    if kind in CONTENT_EVENTS:
        added = kind == "response.content_part.added"
        payload["content_index"] = (
            positions.add_part(payload["item_id"]) if added else positions.parts.get(payload["item_id"], 0)
        )
    if "part" in payload:
        payload["part"] = full_part(payload["part"])
    if kind in TEXT_EVENTS:
        payload.setdefault("logprobs", [])
    return payload


def spec_stream(events: tuple[sse.Event, ...], request: dict) -> tuple[sse.Event, ...]:
    payloads = [event.json() for event in events]
    terminal = next(
        p["response"] for p in reversed(payloads) if isinstance(p, dict) and p.get("type") in TERMINAL_EVENTS
    )
    positions = _StreamPositions()
    result = []
    for number, payload in enumerate(payloads):
        shaped = _spec_payload(payload, positions, terminal, request)
        result.append(sse.make_event(shaped["type"], {**shaped, "sequence_number": number}))
    return tuple(result)


def spec(interaction: Interaction, scenario: Scenario) -> Reply:
    corrected = fixed(interaction, scenario)
    if not corrects(interaction):
        return corrected
    request = interaction.request_json if isinstance(interaction.request_json, dict) else {}
    if corrected.events is not None:
        events = spec_stream(frame_reasoning_text(corrected.events), request)
        body = b"".join(event.raw for event in events)
    else:
        events = None
        body = sse.dump_json(response_object(json.loads(corrected.body), request)).encode("utf-8")
    return Reply(corrected.status, corrected.reason, corrected.headers, body, events, corrected.decided_by)


register(
    Behaviour(
        "spec",
        "the same correction in the full OpenAI Responses wire format (`sequence_number`, `output_index`, "
        "complete response objects), which the official SDKs' stream helpers can consume",
        spec,
        per_request=echo,  # a response object reports the settings the request sent
    )
)
