"""The fixed behaviour, a pure function: recorded interaction -> reply to send.

- ``fixed``: the ``/v1/responses`` truncation signals a correct server would send (DESIGN.md,
  "The fixed behaviour"), decided by the chat twin's ``finish_reason``. Everything else is
  replayed as recorded: chat completions and ``/v1/messages`` are never changed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.reply import Reply, recorded_reply
from mockllama.recordings.cassettes import Interaction, Scenario, chat_finish_reason
from mockllama.wire import sse
from mockllama.wire.routes import RESPONSES_PATH

INCOMPLETE_DETAILS = {"reason": "max_output_tokens"}


@dataclass(frozen=True)
class Verdict:
    """Whether a recorded Responses reply was cut off, and the rule that said so."""

    cut: bool
    rule: str


def _output_tokens(interaction: Interaction) -> int | None:
    if interaction.is_event_stream:
        terminal = next((e.json() for e in reversed(interaction.events) if e.json()), None)
        response = terminal.get("response", {}) if isinstance(terminal, dict) else {}
    else:
        response = interaction.body_json if isinstance(interaction.body_json, dict) else {}
    tokens = (response.get("usage") or {}).get("output_tokens")
    return tokens if isinstance(tokens, int) else None


def verdict(scenario: Scenario, interaction: Interaction) -> Verdict:
    """The twin's ``finish_reason`` decides; without a twin, usage at the limit does. A twin that
    failed (HTTP 400 and up) decides nothing, and neither does usage then: the server was asked and
    did not say, and usage at the limit is a guess that a reply finishing in exactly its limit
    proves wrong (text-exact-limit). The reply is kept as recorded, as with no twin and no usage."""
    twin = scenario.chat_twin(interaction)
    if twin is not None and twin.status >= 400:
        return Verdict(cut=False, rule=f"chat-twin failed (HTTP {twin.status}): kept as recorded")
    reason = chat_finish_reason(twin) if twin is not None else None
    if reason is not None:
        return Verdict(cut=reason == "length", rule=f"chat-twin finish_reason={reason}")
    tokens, limit = _output_tokens(interaction), interaction.limit
    if tokens is None or limit is None:
        return Verdict(cut=False, rule="no chat twin and no usage at a limit: kept as recorded")
    cut = tokens >= limit
    return Verdict(cut=cut, rule=f"usage output_tokens={tokens} {'>=' if cut else '<'} max_output_tokens={limit}")


def corrects(interaction: Interaction) -> bool:
    """Only successful Responses replies carry the status bug; everything else stays as recorded."""
    if interaction.path != RESPONSES_PATH or interaction.status != 200:
        return False
    return interaction.is_event_stream or isinstance(interaction.body_json, dict)


def fix_response_object(response: dict, cut: bool) -> dict:
    """A Responses object with the status that matches how generation really ended."""
    fixed = copy.deepcopy(response)
    for item in fixed.get("output") or []:
        # llama-server streams reasoning items without a status; its non-streamed body says
        # "completed" for the same item, and so does fixed (unless the item was cut, below).
        item.setdefault("status", "completed")
    if not cut:
        fixed["incomplete_details"] = None
        return fixed
    fixed["status"] = "incomplete"
    fixed["incomplete_details"] = dict(INCOMPLETE_DETAILS)
    if "completed_at" in fixed:
        fixed["completed_at"] = None
    if fixed.get("output"):
        fixed["output"][-1]["status"] = "incomplete"  # the item being generated at the cut
    return fixed


def arguments_done_event(item: dict) -> sse.Event:
    """The response.function_call_arguments.done a stream owes a function_call item, cut or finished."""
    payload = {
        "type": "response.function_call_arguments.done",
        "item_id": item.get("id"),
        "arguments": item.get("arguments", ""),
        "name": item.get("name"),
    }
    return sse.make_event(payload["type"], payload)


def fix_stream(events: tuple[sse.Event, ...], cut: bool) -> tuple[sse.Event, ...]:
    payloads = [event.json() for event in events]
    kinds = [p.get("type") if isinstance(p, dict) else None for p in payloads]
    last_item_done = max((i for i, kind in enumerate(kinds) if kind == "response.output_item.done"), default=None)
    # A corrected server (llama-server with the project's patch) sends its own: never a second one.
    announced = {
        p.get("item_id") for p, kind in zip(payloads, kinds) if kind == "response.function_call_arguments.done"
    }
    fixed: list[sse.Event] = []
    for index, (event, payload, kind) in enumerate(zip(events, payloads, kinds)):
        if kind == "response.output_item.done":
            item = payload.get("item") or {}
            if item.get("type") == "function_call" and item.get("id") not in announced:
                fixed.append(arguments_done_event(item))
            if (cut and index == last_item_done) or "status" not in item:
                payload = copy.deepcopy(payload)
                payload["item"]["status"] = "incomplete" if cut and index == last_item_done else "completed"
                event = sse.make_event(kind, payload)
        elif kind == "response.completed":
            terminal = "response.incomplete" if cut else "response.completed"
            payload = {**payload, "type": terminal, "response": fix_response_object(payload["response"], cut)}
            event = sse.make_event(terminal, payload)
        fixed.append(event)
    return tuple(fixed)


def fixed(interaction: Interaction, scenario: Scenario) -> Reply:
    if not corrects(interaction):
        return recorded_reply(interaction)
    decision = verdict(scenario, interaction)
    if interaction.is_event_stream:
        events = fix_stream(tuple(interaction.events), decision.cut)
        body = b"".join(event.raw for event in events)
    else:
        events = None
        body = sse.dump_json(fix_response_object(interaction.body_json, decision.cut)).encode("utf-8")
    return Reply(interaction.status, interaction.reason, interaction.headers, body, events, decision.rule)


register(
    Behaviour(
        "fixed",
        'what a correct server would send: `status: "incomplete"` with `incomplete_details.reason: '
        '"max_output_tokens"` for the replies that really were cut, llama-server\'s event format otherwise kept',
        fixed,
    )
)
