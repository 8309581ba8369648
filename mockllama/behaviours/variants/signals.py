"""A server's truncation signals, declared once (``Variant``), and the transform that writes them
on a recording.

A variant behaviour is llama-server's recorded reply with exactly the signals another server
writes where a reply's end is reported, and nothing else: the text, arguments, ids, usage, event
framing and every other field stay the recording's. The signals on ``/v1/responses``, each for a reply that finished
and for one cut at ``max_output_tokens`` (the chat twin's ``finish_reason``, as ``fixed`` decides):

- the response object's ``status``, ``incomplete_details`` (``null`` and absent are not the same),
  ``completed_at``, and each output item's status by the item's type: in the body, and in the
  response a stream's terminal event carries;
- in a stream: the terminal event's name (its ``event:`` line and its ``type``), each
  ``response.output_item.done`` item's status by type, and which function calls get a
  ``response.function_call_arguments.done``.

A value is written as declared: ``ABSENT`` leaves the key out, ``SET`` is a time (the recorded
``completed_at``, else ``created_at``), any other value is written as it is. An item type a
declaration does not name keeps its recorded status. The signals on ``/v1/chat/completions``
(``finish_reason``, usage) are declared and written by ``chat``. ``check`` reads the same declarations to name
the server whose signals a reply carries.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

from mockllama.behaviours.fixed import arguments_done_event, corrects, verdict
from mockllama.behaviours.reply import Reply
from mockllama.behaviours.variants.chat import Chat, chat_reply
from mockllama.recordings.cassettes import Interaction, Scenario
from mockllama.wire import sse


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


ABSENT = _Marker("ABSENT")  # the key is left out
SET = _Marker("SET")  # completed_at: a time, the recorded one (else created_at)

ARGUMENTS_DONE = "response.function_call_arguments.done"
ARGUMENTS_DELTA = "response.function_call_arguments.delta"
ITEM_DONE = "response.output_item.done"
TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")

# Which function calls get a response.function_call_arguments.done in a stream.
EVERY_CALL = "every call"
NO_CALL = "no call"
CALLS_WITH_A_DELTA = "every call with an arguments delta streamed before it"


@dataclass(frozen=True)
class Both:
    """A signal for a reply that finished and for one that was cut."""

    finished: object
    cut: object

    def when(self, cut: bool):
        return self.cut if cut else self.finished


def same(value) -> Both:
    """A signal that does not depend on how the reply ended: a server that never reads the stop reason."""
    return Both(value, value)


@dataclass(frozen=True)
class Ending:
    """What a response object says about how its reply ended."""

    status: object  # a status string, None (null) or ABSENT
    incomplete_details: object  # a dict, None (null) or ABSENT
    completed_at: object  # SET, None (null) or ABSENT
    items: Mapping[str, object]  # output item type -> its status (a string, None or ABSENT)


@dataclass(frozen=True, eq=False)
class Variant:
    """How one server reports a reply's end, as its source writes it (each module cites it)."""

    name: str  # the behaviour's name and URL prefix: /NAME/v1/responses
    server: str  # as users know it
    signal: str  # what it says of a cut reply, in a line
    citation: str  # repository and issue or PR, with its state
    body: Both  # of Ending
    stream: Both  # of Ending: the response the stream's terminal event carries
    terminal: Both  # of str: the terminal event's name and type
    item_done: Mapping[str, object]  # each response.output_item.done item's status, by type
    arguments_done: str  # EVERY_CALL, NO_CALL or CALLS_WITH_A_DELTA
    chat: Chat  # what its /v1/chat/completions says of a cut reply (chat.py)
    # False for a server known only by its chat side: its /v1/responses is llama-server's, uncited,
    # so check names no server by it.
    responses_read: bool = True

    @property
    def reads_stop_reason(self) -> bool:
        return any(signal.finished != signal.cut for signal in (self.body, self.stream, self.terminal))

    def __str__(self) -> str:
        return f"{self.server}: {self.signal} ({self.citation})"

    @property
    def description(self) -> str:
        """The behaviour's line in ``serve --help`` and the docs' list."""
        return f"{self.server}'s truncation signals on llama-server's recorded bytes: {self.signal} ({self.citation})"

    def reply(self, interaction: Interaction, scenario: Scenario) -> Reply:
        """The recorded reply with this server's signals: the behaviour, a pure function."""
        if not corrects(interaction):
            return chat_reply(interaction, self.chat)  # a chat completion, or as recorded
        decision = verdict(scenario, interaction)
        rule = decision.rule if self.reads_stop_reason else None
        if interaction.is_event_stream:
            events = write_stream(tuple(interaction.events), self, decision.cut)
            body = b"".join(event.raw for event in events)
        else:
            events = None
            written = write_ending(interaction.body_json, self.body.when(decision.cut))
            body = interaction.body if written == interaction.body_json else sse.dump_json(written).encode("utf-8")
        return Reply(interaction.status, interaction.reason, interaction.headers, body, events, rule)


def _put(where: dict, key: str, value) -> None:
    if value is ABSENT:
        where.pop(key, None)
    else:
        where[key] = copy.deepcopy(value)


def write_ending(response: dict, ending: Ending) -> dict:
    """``response`` saying what ``ending`` says; every other field as it was."""
    written = copy.deepcopy(response)
    _put(written, "status", ending.status)
    _put(written, "incomplete_details", ending.incomplete_details)
    if ending.completed_at is SET:
        written["completed_at"] = response.get("completed_at", response.get("created_at"))
    else:
        _put(written, "completed_at", ending.completed_at)
    for item in written.get("output") or []:
        if isinstance(item, dict) and item.get("type") in ending.items:
            _put(item, "status", ending.items[item["type"]])
    return written


def _sends_arguments_done(variant: Variant, item: dict, with_delta: set) -> bool:
    if variant.arguments_done == EVERY_CALL:
        return True
    return variant.arguments_done == CALLS_WITH_A_DELTA and item.get("id") in with_delta


def write_stream(events: tuple[sse.Event, ...], variant: Variant, cut: bool) -> tuple[sse.Event, ...]:
    """The recorded stream with ``variant``'s signals; an event whose payload does not change keeps
    its recorded bytes."""
    payloads = [event.json() for event in events]
    kinds = [payload.get("type") if isinstance(payload, dict) else None for payload in payloads]
    with_delta = {p.get("item_id") for p, kind in zip(payloads, kinds) if kind == ARGUMENTS_DELTA}
    announced = {p.get("item_id") for p, kind in zip(payloads, kinds) if kind == ARGUMENTS_DONE}
    calls = {
        p["item"].get("id"): p["item"]
        for p, kind in zip(payloads, kinds)
        if kind == ITEM_DONE and isinstance(p.get("item"), dict) and p["item"].get("type") == "function_call"
    }
    written: list[sse.Event] = []
    for event, payload, kind in zip(events, payloads, kinds):
        if kind == ARGUMENTS_DONE:
            call = calls.get(payload.get("item_id"))
            if call is not None and not _sends_arguments_done(variant, call, with_delta):
                continue  # a recording that has one (a corrected server's), for a server that sends none
        elif kind == ITEM_DONE:
            item = payload.get("item") or {}
            if item.get("id") in calls and item.get("id") not in announced:
                if _sends_arguments_done(variant, item, with_delta):
                    written.append(arguments_done_event(item))
            if item.get("type") in variant.item_done:
                changed = copy.deepcopy(payload)
                _put(changed["item"], "status", variant.item_done[item["type"]])
                event = event if changed == payload else sse.make_event(event.name, changed)
        elif kind in TERMINAL_EVENTS and isinstance(payload.get("response"), dict):
            name = variant.terminal.when(cut)
            changed = {**payload, "type": name, "response": write_ending(payload["response"], variant.stream.when(cut))}
            event = event if changed == payload and event.name == name else sse.make_event(name, changed)
        written.append(event)
    return tuple(written)
