"""LocalAI: "completed" on every reply and item, ``incomplete_details: null``.

mudler/LocalAI at 82c191afadf5f005281e798ccfa0ffd0d5805030,
``core/http/endpoints/openresponses/responses.go``: the Responses handlers never read a finish
reason (only ``choices[0].Logprobs``: :853, :1124, :1343); ``ORStatusIncomplete`` exists
(``core/schema/openresponses.go:13``) and is never used. The non-streamed reply is built with
"completed" (``buildORResponse(..., &now, "completed", ...)``, :1582), ``completed_at`` set
(:2899) and ``IncompleteDetails: nil`` (:2904), a field that is always present
(``core/schema/openresponses.go:143``); every item is built "completed": reasoning (:1375),
message (:1485), function_call (:1496). The stream ends with ``response.completed`` (:2312-2322,
:2669-2678), "completed", ``completed_at`` set; its ``response.output_item.done`` events say
"completed" for messages (:2223, :2596), reasoning (:2038) and calls (:1771, :1812, :2248, :2616).
``response.function_call_arguments.done`` goes out only on the XML incremental tool-call path
(:1760-1768); calls parsed from JSON (:1790-1836) or emitted at the end of the stream
(:2239-2270, :2606-2634) get none, and this variant sends none. No LocalAI issue or PR on this
was found.

Its chat endpoint (``core/http/endpoints/openai/chat.go`` at the same commit) says "tool_calls" for
a cut reply that holds a call, whatever stopped it. Non-streamed: calls come first from llama.cpp's
own parser (the backend's ChatDeltas, :794-796; the parser that gave llama-server's recorded partial
calls, so a call cut mid-arguments counts), a choice with calls is written "tool_calls" (:849), and
``max_tokens`` reached turns only a "stop" into "length" (:1012-1020, ``reachedTokenBudget``,
``inference.go:20``). The stream's final chunk: "tool_calls" when a call was sent, else "length" at
the limit (:631-640). Usage is the backend's count (:1027). A cut text reply says "length"
(issue 3533 and the fix for issue 9716).

Not copied: the XML path's ``function_call_arguments.done``; the fresh ids of the terminal
response's function_call items (:2298-2307); LocalAI's own usage and event framing.
"""

from __future__ import annotations

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.variants.chat import Chat, ChatEnding
from mockllama.behaviours.variants.signals import NO_CALL, SET, Ending, Variant, same

ITEMS = {"message": "completed", "function_call": "completed", "reasoning": "completed"}

TOOL_CALLS = ChatEnding(call_finish_reason="tool_calls", any_call=True)  # the same in the body and the stream

VARIANT = Variant(
    name="localai",
    server="LocalAI",
    signal="'completed' everywhere, incomplete_details null, no function_call_arguments.done",
    citation="mudler/LocalAI, no issue filed",
    body=same(Ending("completed", None, SET, ITEMS)),
    stream=same(Ending("completed", None, SET, ITEMS)),
    terminal=same("response.completed"),
    item_done=ITEMS,
    arguments_done=NO_CALL,
    chat=Chat(
        body=TOOL_CALLS,
        stream=TOOL_CALLS,
        source="mudler/LocalAI core/http/endpoints/openai/chat.go @82c191af",
    ),
)


register(Behaviour(VARIANT.name, VARIANT.description, VARIANT.reply))
