"""Type checks on request bodies that no recording answers, worded as llama-server words them."""

from __future__ import annotations

from .cassettes import CHAT_PATH, RESPONSES_PATH

MESSAGES_PATH = "/v1/messages"

# endpoint -> (field, accepted types, message); messages as llama-server b11434 wrote them where recorded
_FIELD_RULES = {
    RESPONSES_PATH: [
        ("input", (str, list), "'input' must be a string or array of objects"),
        ("max_output_tokens", (int,), "'max_output_tokens' must be an integer"),
    ],
    CHAT_PATH: [
        ("messages", (list,), "Expected 'messages' to be an array"),
        ("max_tokens", (int,), "'max_tokens' must be an integer"),
    ],
    MESSAGES_PATH: [
        ("messages", (list,), "Expected 'messages' to be an array"),
        ("max_tokens", (int,), "'max_tokens' must be an integer"),
    ],
}


def type_error(path: str, body) -> str | None:
    """The first problem with the body's shape, or None when it looks like a valid request."""
    if not isinstance(body, dict):
        return f"the request body must be a JSON object, not {type(body).__name__}"
    if "stream" in body and not isinstance(body["stream"], bool):
        return "'stream' must be a boolean"
    for field, types, message in _FIELD_RULES.get(path, []):
        value = body.get(field)
        # bool is an int in Python, never in JSON
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            return message
    if path == RESPONSES_PATH and "input" not in body:
        return "'input' is required"
    return None
