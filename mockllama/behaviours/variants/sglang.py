"""SGLang: "completed" whatever the stop reason, no ``completed_at``, reasoning items null.

sgl-project/sglang, read file by file from the code index (too large to fetch: no line numbers;
newer code may differ). ``responses_full_generator`` in
``python/sglang/srt/entrypoints/openai/serving_responses.py`` (@00c4466b, @41c3e5a4) passes the
literal ``status="completed"`` to ``ResponsesResponse.from_request``, which writes
``incomplete_details`` null (``protocol.py`` @004c82e0) and has no ``completed_at`` field;
``_make_response_output_items`` writes "completed" on messages and function calls and ``status:
None`` on reasoning items. The non-Harmony stream (``responses_stream_generator_non_harmony``, in
a newer-looking version the index holds without its commit) reads the finish reason only to keep
looping, closes every item with ``response.output_item.done`` "completed" (``_close_message_item``,
``_close_reasoning_item``, ``_close_tool_call_state``, which also sends
``response.function_call_arguments.done`` for every open call) and ends with ``response.completed``
whose response says "completed". No SGLang issue or PR on this was found.

Its chat endpoint is honest (``python/sglang/srt/entrypoints/openai/serving_chat.py`` @002897c2,
from the same index): the non-streamed reply (``_build_chat_response`` through
``_process_tool_calls``) turns the finish reason into "tool_calls" only when it is "stop", and the
stream's finish chunks (``_handle_streaming_request``) only when a call was streamed and the reason
is "stop"; so a cut reply says "length", a parsed call or not. Usage is the engine's
``completion_tokens`` (``UsageProcessor``).

Not copied: how the terminal response lists its items (taken here as the non-streamed builder
writes them, not confirmed for the non-Harmony stream); the versions whose ``incomplete_details``
is absent; SGLang's own ids, usage and event framing.
"""

from __future__ import annotations

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.variants.chat import HONEST, Chat
from mockllama.behaviours.variants.signals import ABSENT, EVERY_CALL, Ending, Variant, same

ITEMS = {"message": "completed", "function_call": "completed", "reasoning": None}

VARIANT = Variant(
    name="sglang",
    server="SGLang",
    signal="'completed' everywhere, incomplete_details null, no completed_at",
    citation="sgl-project/sglang, no issue filed",
    body=same(Ending("completed", None, ABSENT, ITEMS)),
    stream=same(Ending("completed", None, ABSENT, ITEMS)),
    terminal=same("response.completed"),
    item_done={"message": "completed", "function_call": "completed", "reasoning": "completed"},
    arguments_done=EVERY_CALL,
    chat=Chat(HONEST, HONEST, source="sgl-project/sglang serving_chat.py @002897c2"),
)


register(Behaviour(VARIANT.name, VARIANT.description, VARIANT.reply))
