"""Ollama: "completed" whatever the stop reason, with ``incomplete_details: null``.

ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7, ``openai/responses.go``: the Responses
layer never reads ``DoneReason``. ``ToResponse`` (:898) writes ``status: "completed"`` (:985) and
``IncompleteDetails: nil`` (:986), a field without ``omitempty`` (:788), so the key is there and
null; ``completed_at`` is set when the reply is written (``middleware/openai.go:533-535``);
function_call items say "completed" (:922), message items "completed" (:932), and reasoning items
carry no status key (:902-913, ``omitempty`` at :819). The stream ends with ``response.completed``
only (:1619), its response built with "completed" and ``incomplete_details`` nil (:1196-1197, :1617)
and ``completed_at`` set (:1618); ``response.function_call_arguments.done`` goes out for every call
(:1351), ``response.output_item.done`` says "completed" for calls (:1327) and messages (:1593), and
nothing for reasoning items (:1283-1288). The fix is ollama/ollama PR 17239 ("openai: report
incomplete status when responses hit the output token limit"), open.

Its chat endpoint is honest (``openai/openai.go`` at the same commit): the non-streamed reply
(``ToChatCompletion``, :269) relabels ``DoneReason`` "tool_calls" only when it is "stop" (:287), and
the stream's finish chunk (``FinishChunk``, :369) the same (:374), so a cut reply, a parsed call or
not, says "length"; usage is the model's eval count (``ToUsage``, :240-243).

Not copied: the empty message item Ollama appends after a reply cut while thinking (:928-943),
``completed_at`` as the time of writing (the recorded ``created_at`` here, where llama-server's
stream has none), and Ollama's own ids, usage and event framing: the rest is llama-server's bytes.
"""

from __future__ import annotations

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.variants.chat import HONEST, Chat
from mockllama.behaviours.variants.signals import ABSENT, EVERY_CALL, SET, Ending, Variant, same

ITEMS = {"message": "completed", "function_call": "completed", "reasoning": ABSENT}

VARIANT = Variant(
    name="ollama",
    server="Ollama",
    signal="'completed' everywhere, incomplete_details null, completed_at set",
    citation="ollama/ollama PR 17239, open",
    body=same(Ending("completed", None, SET, ITEMS)),
    stream=same(Ending("completed", None, SET, ITEMS)),
    terminal=same("response.completed"),
    item_done=ITEMS,
    arguments_done=EVERY_CALL,
    chat=Chat(HONEST, HONEST, source="ollama/ollama openai/openai.go @fb307609"),
)


register(Behaviour(VARIANT.name, VARIANT.description, VARIANT.reply))
