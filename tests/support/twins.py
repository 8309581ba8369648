"""A chat completion as ``check`` reads it (``ChatSeen``), made by hand: the chat twin a Responses
probe judges against, or a chat probe's own reply."""

from __future__ import annotations

from mockllama.behaviours.variants.signals import ABSENT
from mockllama.check.reading import ChatSeen


def said(reason: str | None, tokens: object = ABSENT, arguments=(), limit: int = 8, stream: bool = False) -> ChatSeen:
    """A chat reply that says ``finish_reason: reason``; with ``usage.completion_tokens`` only when
    ``tokens`` is given, and tool calls with these ``arguments``, to a request with this ``max_tokens``."""
    return ChatSeen(reason, tokens, list(arguments), limit, stream)
