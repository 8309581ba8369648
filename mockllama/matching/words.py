"""A request in its client's own words: the form the 404 compares and names.

Matching compares the chat request llama-server generates from (``canonical``), so a Responses
request's ``instructions`` is its first chat message there, and its ``input`` items the others. A
client never wrote those messages. The 404 compares a Responses request as a Responses client
writes it: ``instructions``, ``input`` (function calls and their outputs as input items),
``max_output_tokens``, ``tools`` and ``tool_choice``, each made from the canonical form, so every
equivalence still holds and what the 404 calls a difference is one for llama-server too. A chat or
``/v1/messages`` request is compared in its canonical form, which is already in its client's words
but for the names ``names`` gives back.
"""

from __future__ import annotations

import re

from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH


def client_form(path: str, body, canonical):
    """``canonical`` (the canonical form of ``body``) as the client of ``path`` writes it."""
    if path != RESPONSES_PATH or not isinstance(canonical, dict) or not isinstance(canonical.get("messages"), list):
        return canonical  # a malformed Responses request is compared as sent already
    form = {key: value for key, value in canonical.items() if key not in ("messages", "max_tokens", "tools")}
    messages = canonical["messages"]
    if isinstance(body, dict) and "instructions" in body and messages and _role(messages[0]) == "system":
        form["instructions"] = messages[0].get("content")
        messages = messages[1:]
    form["input"] = [_input_item(message) for message in messages]
    if "max_tokens" in canonical:
        form["max_output_tokens"] = canonical["max_tokens"]
    if "tools" in canonical:
        tools = canonical["tools"]
        form["tools"] = [_responses_tool(tool) for tool in tools] if isinstance(tools, list) else tools
    if "tool_choice" in canonical:
        form["tool_choice"] = _responses_tool_choice(canonical["tool_choice"])
    return dict(sorted(form.items()))


def _role(message) -> object:
    return message.get("role") if isinstance(message, dict) else None


def _input_item(message):
    """A chat message back as the Responses input item it was made from (``chat_twin``)."""
    if not isinstance(message, dict):
        return message
    if isinstance(message.get("content"), list):
        return {**message, "content": [_input_part(part, message.get("role")) for part in message["content"]]}
    calls = message.get("tool_calls")
    if set(message) == {"role", "tool_calls"} and isinstance(calls, list) and len(calls) == 1:
        call = calls[0]
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and set(function) == {"arguments", "name"}:
            return {"arguments": function["arguments"], "call_id": call.get("id"), "name": function["name"],
                    "type": "function_call"}  # fmt: skip
    if set(message) == {"content", "role", "tool_call_id"} and message["role"] == "tool":
        return {"call_id": message["tool_call_id"], "output": message["content"], "type": "function_call_output"}
    return message


def _input_part(part, role):
    """A chat content part back as the Responses part it was made from."""
    if not isinstance(part, dict):
        return part
    if part.get("type") == "text" and set(part) == {"type", "text"}:
        return {"type": "output_text" if role == "assistant" else "input_text", "text": part["text"]}
    url = part.get("image_url")
    if (
        part.get("type") == "image_url"
        and set(part) == {"type", "image_url"}
        and isinstance(url, dict)
        and set(url) == {"url"}
    ):
        return {"type": "input_image", "image_url": url["url"]}
    return part


def _responses_tool(tool):
    if isinstance(tool, dict) and tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        return dict(sorted({**tool["function"], "type": "function"}.items()))
    return tool


def _responses_tool_choice(choice):
    function = choice.get("function") if isinstance(choice, dict) else None
    if isinstance(function, dict) and choice.get("type") == "function" and set(function) == {"name"}:
        return {"name": function["name"], "type": "function"}
    return choice


_TOOL_KEY = re.compile(r"^tools\[(\d+)\]\.")


def client_name(path: str, body, field: str) -> str:
    """A field of the compared form named as the client sent it: a Responses request's string
    ``input`` is ``input``, not its one item's ``content``; a chat request's limit is the name the
    client used (``max_completion_tokens`` or ``max_tokens``), and a chat tool's keys are inside
    its ``function``."""
    sent = body if isinstance(body, dict) else {}
    if path == RESPONSES_PATH:
        if field.startswith("input[0].content") and isinstance(sent.get("input"), str):
            return "input" + field[len("input[0].content") :]
        return field
    if path == CHAT_PATH:
        if field == "max_tokens" and "max_tokens" not in sent and "max_completion_tokens" in sent:
            return "max_completion_tokens"
        tool = _TOOL_KEY.match(field)
        if tool and not field[tool.end() :].startswith("type"):
            return f"{tool.group(0)}function.{field[tool.end() :]}"
    return field
