"""Stock llama-server b11434: every reply, and every item in it, says "completed".

Its behaviour is ``buggy``, the recordings themselves; this declaration is what ``check`` names it
by, and it is held to the recordings (applied to them, it changes no byte). Read from the b11434
sdist mockllama records with, ``tools/server/server-task.cpp``: the non-streamed reply
(``to_json_oaicompat_resp``, :528) writes "completed" on its reasoning (:549), message (:563) and
function_call (:572) items and on the response (:587), with ``completed_at`` (:581) and no
``incomplete_details`` key; the stream (``to_json_oaicompat_resp_stream``, :599) writes
"completed" on its message (:652) and function_call (:672) items, a reasoning item without a
status (:604-613), and ends with ``response.completed`` (:689, :691) whose response says
"completed" (:696), with neither ``completed_at`` nor ``incomplete_details``; no
``response.function_call_arguments.done`` is ever sent (:676-684). The stop reason is there
(``stop``, :255) and only the chat builders read it. Upstream: ggml-org/llama.cpp issue 30773
(as the issue names it; not found in the search index, so its state is unknown).

Its chat endpoint is honest, and the recordings are the proof: every chat reply cut at
``max_tokens`` says ``finish_reason: "length"``, a parsed tool call or not, and its usage counts
every token generated (``completion_tokens`` equals ``max_tokens``).
"""

from __future__ import annotations

from mockllama.behaviours.variants.chat import HONEST, Chat
from mockllama.behaviours.variants.signals import ABSENT, NO_CALL, SET, Ending, Variant, same

COMPLETED = {"message": "completed", "function_call": "completed", "reasoning": "completed"}
STREAMED = {"message": "completed", "function_call": "completed", "reasoning": ABSENT}

VARIANT = Variant(
    name="buggy",
    server="stock llama-server",
    signal="'completed' everywhere, no incomplete_details, no function_call_arguments.done",
    citation="ggml-org/llama.cpp issue 30773",
    body=same(Ending("completed", ABSENT, SET, COMPLETED)),
    stream=same(Ending("completed", ABSENT, ABSENT, STREAMED)),
    terminal=same("response.completed"),
    item_done=STREAMED,
    arguments_done=NO_CALL,
    chat=Chat(HONEST, HONEST, source="the recordings themselves"),
)
