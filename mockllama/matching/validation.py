"""Type checks on request bodies that no recording answers, worded as llama-server words them."""

from __future__ import annotations

from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH, RESPONSES_PATH

# endpoint -> (field, accepted types, message); messages as llama-server b11434 wrote them where recorded
_FIELD_RULES: dict[str, list[tuple[str, tuple[type, ...], str]]] = {
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


# JSON type names as llama-server's JSON library (nlohmann) spells them in its messages
_JSON_TYPES = {str: "string", int: "number", float: "number", dict: "object", list: "array"}
STREAM_CHECKED_PATHS = (RESPONSES_PATH, CHAT_PATH)  # seen on llama-server b11434 (tests/live)


def stream_type_error(path: str, body) -> str | None:
    """llama-server b11434 refuses a "stream" that is neither a boolean nor null, recorded or not,
    with this very message; null counts as false."""
    if path not in STREAM_CHECKED_PATHS or not isinstance(body, dict):
        return None
    stream = body.get("stream")
    if stream is None or isinstance(stream, bool):
        return None
    kind = _JSON_TYPES.get(type(stream), type(stream).__name__)
    return f"Field 'stream': [json.exception.type_error.302] type must be boolean, but is {kind}"


def type_error(path: str, body) -> str | None:
    """The first problem with the body's shape, or None when it looks like a valid request."""
    if not isinstance(body, dict):
        return f"the request body must be a JSON object, not {type(body).__name__}"
    if body.get("stream") is not None and not isinstance(body["stream"], bool):
        return stream_type_error(path, body) or "'stream' must be a boolean"
    for field, types, message in _FIELD_RULES.get(path, []):
        value = body.get(field)
        # bool is an int in Python, never in JSON
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            return message
    if path == RESPONSES_PATH and "input" not in body:
        return "'input' is required"
    if path in STREAM_CHECKED_PATHS and body.get("top_logprobs") is not None and body.get("logprobs") is not True:
        return "top_logprobs requires logprobs to be set to true"  # llama-server b11434's words (tests/live)
    return None
