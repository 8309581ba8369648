"""The Responses-to-chat conversion: the /v1/chat/completions request that asks the same as a
/v1/responses request, as llama-server itself converts one before it generates.

The recorder sends it as each Responses request's twin, and the matcher compares requests in it
(canonical form); a conversation's turn is counted in it too.
"""

from __future__ import annotations

from mockllama.wire.routes import RESPONSES_PATH


def _chat_content(content):
    """Responses content parts -> chat content parts; a plain string stays a string."""
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        kind = part.get("type")
        if kind in ("input_text", "output_text"):
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "input_image":
            parts.append({"type": "image_url", "image_url": {"url": part.get("image_url")}})
        else:
            parts.append(part)
    return parts


def _chat_messages(request: dict) -> list[dict]:
    messages = []
    if "instructions" in request:  # as llama-server does: null or "" is an empty system turn, not none
        instructions = request["instructions"]
        messages.append({"role": "system", "content": "" if instructions is None else instructions})
    given = request.get("input")
    if isinstance(given, str):
        return [*messages, {"content": given, "role": "user"}]
    for item in given or []:
        if item.get("type", "message") == "message":
            messages.append({"content": _chat_content(item["content"]), "role": item["role"]})
        elif item.get("type") == "function_call":
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"]},
            }
            messages.append({"role": "assistant", "tool_calls": [call]})
        elif item.get("type") == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
    return messages


def _chat_tool(tool: dict) -> dict:
    if tool.get("type") != "function":
        return tool
    function = {key: value for key, value in tool.items() if key != "type"}
    return {"function": function, "type": "function"}


def _chat_tool_choice(choice):
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"function": {"name": choice["name"]}, "type": "function"}
    return choice


def chat_twin(request: dict) -> dict:
    """The /v1/chat/completions request that asks the same as a /v1/responses request."""
    twin = {}
    for key, value in request.items():
        if key in ("input", "instructions"):
            continue
        if key == "max_output_tokens":
            twin["max_tokens"] = value
        elif key == "tools":
            twin["tools"] = [_chat_tool(tool) for tool in value]
        elif key == "tool_choice":
            twin["tool_choice"] = _chat_tool_choice(value)
        else:
            twin[key] = value
    twin["messages"] = _chat_messages(request)
    return twin


def replies_carried(messages) -> int:
    """How many model replies a conversation already carries: runs of assistant messages that
    something follows. A trailing assistant message is a prefill the model continues, not a reply."""
    if not isinstance(messages, list):
        return 0
    replies, in_run = 0, False
    for message in messages:
        is_model = isinstance(message, dict) and message.get("role") == "assistant"
        if in_run and not is_model:
            replies += 1
        in_run = is_model
    return replies


def messages_of(path: str, body) -> list | None:
    """The chat messages a request body amounts to: a Responses request's through its chat twin,
    any other's as sent; None where there are none (or the input items are malformed)."""
    if not isinstance(body, dict):
        return None
    if path == RESPONSES_PATH:
        try:
            body = chat_twin(body)
        except (KeyError, TypeError, AttributeError):  # malformed input items: no conversation
            return None
    messages = body.get("messages")
    return messages if isinstance(messages, list) else None


def turn_of(path: str, body) -> int:
    """The turn a request asks for, read from its own input: 1 + the model replies it carries."""
    return 1 + replies_carried(messages_of(path, body))
