"""The turn a request asks of a scenario chosen by name: only the scenario's own replies count.

An agent loop sends back what the scenario replied: its function call (with the recorded
``call_id``, or at least the recorded name and arguments), the call's output, or its recorded text.
Each such reply in the history moves the conversation one turn on, so that the loop reaches the end
of the recording and gets a 404 instead of the same tool call forever. Any other history (a
conversation the user wrote, someone else's tool calls) is just the prompt: it asks for turn 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockllama.recordings.cassettes import Interaction, Scenario
from mockllama.recordings.chat_twin import messages_of
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH


@dataclass
class OwnReplies:
    """What a scenario's recordings replied: call ids, (name, arguments) pairs, and texts."""

    call_ids: set[str] = field(default_factory=set)
    calls: set[tuple[str, str]] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)

    def add_call(self, call_id, name, arguments) -> None:
        if isinstance(call_id, str) and call_id:
            self.call_ids.add(call_id)
        if isinstance(name, str) and isinstance(arguments, str):
            self.calls.add((name, arguments))

    def add_text(self, text) -> None:
        if isinstance(text, str) and text.strip():
            self.texts.add(text.strip())


def _responses_output(replies: OwnReplies, items) -> None:
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            replies.add_call(item.get("call_id"), item.get("name"), item.get("arguments"))
        elif item.get("type") == "message" and isinstance(item.get("content"), list):
            replies.add_text(
                "".join(
                    part.get("text", "")
                    for part in item["content"]
                    if isinstance(part, dict) and isinstance(part.get("text"), str)
                )
            )


def _chat_message(replies: OwnReplies, message) -> None:
    if not isinstance(message, dict):
        return
    replies.add_text(message.get("content"))
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            replies.add_call(call.get("id"), function.get("name"), function.get("arguments"))


def _streamed_chat(replies: OwnReplies, interaction: Interaction) -> None:
    """A streamed chat reply, put back together from its deltas: text, and each call by index."""
    text: list[str] = []
    calls: dict[object, dict] = {}
    for event in interaction.events:
        payload = event.json()
        for choice in payload.get("choices") or [] if isinstance(payload, dict) else []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for part in delta.get("tool_calls") or []:
                if not isinstance(part, dict):
                    continue
                call = calls.setdefault(part.get("index", 0), {"id": None, "name": "", "arguments": ""})
                call["id"] = part.get("id") or call["id"]
                function = part.get("function") or {}
                call["name"] += function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
    replies.add_text("".join(text))
    for call in calls.values():
        replies.add_call(call["id"], call["name"], call["arguments"])


def own_replies(scenario: Scenario) -> OwnReplies:
    """Every reply the scenario's recordings hold, streamed or not, on both endpoints."""
    replies = OwnReplies()
    for interaction in scenario.interactions:
        if interaction.method != "POST" or interaction.status >= 400:
            continue
        if interaction.path == RESPONSES_PATH:
            if interaction.is_event_stream:
                for event in interaction.events:
                    payload = event.json()
                    if isinstance(payload, dict):
                        _responses_output(replies, [payload.get("item")])
                        response = payload.get("response")
                        _responses_output(replies, response.get("output") if isinstance(response, dict) else None)
            elif isinstance(interaction.body_json, dict):
                _responses_output(replies, interaction.body_json.get("output"))
        elif interaction.path == CHAT_PATH:
            if interaction.is_event_stream:
                _streamed_chat(replies, interaction)
            elif isinstance(interaction.body_json, dict):
                for choice in interaction.body_json.get("choices") or []:
                    if isinstance(choice, dict):
                        _chat_message(replies, choice.get("message"))
    return replies


def _text(content) -> str | None:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        ).strip()
    return None


def _is_own(message: dict, replies: OwnReplies) -> bool:
    if message.get("role") == "tool":
        return message.get("tool_call_id") in replies.call_ids
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        if call.get("id") in replies.call_ids or (function.get("name"), function.get("arguments")) in replies.calls:
            return True
    return bool(_text(message.get("content"))) and _text(message.get("content")) in replies.texts


def own_turn(path: str, body, replies: OwnReplies) -> int:
    """1 + the model replies in the request's history that are the scenario's own: a run of
    assistant messages counts when one of them, or a tool output that answers it, is the scenario's."""
    turns, run, own = 1, None, False  # run: None before any reply, "open" in it, "followed" after it
    for message in messages_of(path, body) or []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            if run == "followed":  # the run before this one is over: count it if it was the scenario's
                turns += own
            if run != "open":
                run, own = "open", False
            own = own or _is_own(message, replies)
        elif run is not None:
            run = "followed"
            own = own or (message.get("role") == "tool" and _is_own(message, replies))
    return turns + (run == "followed" and own)  # a trailing assistant message is a prefill, no reply
