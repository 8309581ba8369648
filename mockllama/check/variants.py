"""Naming the variant: which known servers' way of reporting a cut a reply carries, read off the
signals each server's behaviour declares (``behaviours/variants/``): on ``/v1/responses``
(``VARIANTS``, ``fits``) and on ``/v1/chat/completions`` (``CHAT_VARIANTS``, ``fits_chat``)."""

from __future__ import annotations

from typing import cast

from mockllama.behaviours.variants import SERVERS
from mockllama.behaviours.variants import VARIANTS as DECLARED_VARIANTS
from mockllama.behaviours.variants.chat import CUT, HONEST, NOT_SENT, Chat, ChatEnding
from mockllama.behaviours.variants.signals import (
    ABSENT,
    CALLS_WITH_A_DELTA,
    EVERY_CALL,
    SET,
    Ending,
    Variant,
)
from mockllama.check.reading import ChatSeen, Seen, _event_names

# The servers whose way of reporting a reply's end is known, each declared once beside its
# behaviour (mockllama/behaviours/variants/, citing that server's source). A probe names those whose
# signals its cut reply carries, every one of them: on one probe, two servers may look the same.
VARIANTS = DECLARED_VARIANTS


def _says(value, declared) -> bool:
    """Whether a field's value (ABSENT when the key is missing) is what a declaration says."""
    if declared is SET:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return value is declared if declared is ABSENT or value is ABSENT else value == declared


def fits(variant: Variant, seen: Seen) -> bool:
    """Whether a cut reply carries exactly the signals ``variant``'s server writes for one."""
    stream = seen.terminal is not None
    ending = cast(Ending, (variant.stream if stream else variant.body).cut)  # a Both of Ending
    response = seen.response
    if not all(
        _says(response.get(key, ABSENT), declared)
        for key, declared in (
            ("status", ending.status),
            ("incomplete_details", ending.incomplete_details),
            ("completed_at", ending.completed_at),
        )
    ):
        return False
    output = response.get("output") or []
    cut = output[-1] if output else {}
    if cut.get("type") in ending.items and not _says(cut.get("status", ABSENT), ending.items[cut["type"]]):
        return False
    if seen.terminal is None:  # not a stream
        return True
    if len(seen.terminals) != 1 or _event_names(seen.terminal) != {variant.terminal.cut}:
        return False
    if cut.get("type") == "function_call" and variant.arguments_done != CALLS_WITH_A_DELTA:
        return (cut.get("id") in seen.arguments_done) is (variant.arguments_done == EVERY_CALL)
    return True


# --- The chat endpoint ---

# The servers whose /v1/chat/completions reports a cut reply otherwise than llama-server's (honest)
# one, each as read in its source or bug tracker (``Variant.chat``, beside its behaviour).
CHAT_VARIANTS = tuple(variant for variant in SERVERS if variant.chat.read and not variant.chat.honest)


def _chat_ending_said(ending: ChatEnding) -> str:
    """What a server's chat reply says when cut at max_tokens, in words, from its declaration."""
    said = []
    call = ending.call_finish_reason
    if ending.finish_reason is not None and call in (None, ending.finish_reason):
        said.append(f"finish_reason '{ending.finish_reason}' for every cut reply")
    else:
        if call is not None:
            calls = "any tool call" if ending.any_call else "a tool call whose arguments parse"
            said.append(f"finish_reason '{call}' for a cut reply with {calls}")
            if ending.call_tool_choices is not None:
                choices = " or ".join(f"'{c}'" if c != NOT_SENT else "none sent" for c in ending.call_tool_choices)
                said[-1] += f", under tool_choice {choices}"
        if ending.finish_reason is not None:
            said.append(f"'{ending.finish_reason}' for another cut reply")
    if ending.completion_tokens:
        sign = "+" if ending.completion_tokens > 0 else "-"
        said.append(f"usage.completion_tokens max_tokens {sign} {abs(ending.completion_tokens)} on a cut reply")
    return "; ".join(said) or f"finish_reason '{CUT}' as llama-server's"


def chat_signal(chat: Chat) -> str:
    """What a server's /v1/chat/completions says of a reply cut at max_tokens, in a line: its body's
    signals, and its stream's where they differ."""
    if chat.stream == chat.body:
        return _chat_ending_said(chat.body)
    return f"{_chat_ending_said(chat.body)}; streamed, {_chat_ending_said(chat.stream)}"


def chat_named(variant: Variant) -> str:
    """How check names a server by its chat side: the server, what it says of a cut reply, the source."""
    return f"{variant.server}: {chat_signal(variant.chat)} ({variant.chat.source})"


def _carries(ending: ChatEnding, seen: ChatSeen, tool_choice: str) -> bool:
    """Whether a cut chat reply says what ``ending`` writes on llama-server's: the finish_reason it
    gives these calls under this tool_choice, and where usage was sent, the count it gives
    (llama-server counts a cut reply's max_tokens tokens)."""
    if seen.finish_reason != (ending.finish_reason_for(seen.arguments, tool_choice) or CUT):
        return False
    tokens = seen.completion_tokens
    if tokens is ABSENT:
        return True
    return isinstance(seen.limit, int) and _says(tokens, SET) and tokens == seen.limit + ending.completion_tokens


def fits_chat(variant: Variant, seen: ChatSeen, tool_choice: str) -> bool:
    """Whether a cut chat reply carries exactly the signals ``variant``'s server writes for one,
    and they are not llama-server's honest ones (which most servers' chat sides share)."""
    ending = variant.chat.stream if seen.stream else variant.chat.body
    return _carries(ending, seen, tool_choice) and not _carries(HONEST, seen, tool_choice)
