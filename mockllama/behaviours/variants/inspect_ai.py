"""inspect_ai's agent bridge: ``status: null``, with ``incomplete_details`` set for a cut.

UKGovernmentBEIS/inspect_ai at 499e6152e7b8fc8cbd8ac5283536572aa6e4ab17. The bridge builds the
Responses object in ``src/inspect_ai/agent/_bridge/responses_impl.py`` without a ``status``
(``Response(...)``, :325-337), and the sandbox service dumps it with ``model_dump(mode="json")``
(``agent/_bridge/sandbox/service.py:120``), so the reply says ``"status": null``;
``incomplete_details`` is ``{"reason": "max_output_tokens"}`` for a reply stopped at the limit and
null otherwise (``responses_incomplete_details``, :635-643); ``completed_at`` is never set, so the
openai SDK's model writes null. Message items say "completed" (:1176, :1196; reasoning is sent
as such a message), function_call items have no status, so null (:1266-1273). The sandbox proxy
makes the stream from that object (``_agent_bridge/proxy.py``, ``stream_response``, :715-1410):
``response.function_call_arguments.done`` for every call (:919-931), each
``response.output_item.done`` with its status forced to "completed" (:1371-1387), and one
``response.completed`` whose response is the object with ``status: "completed"`` and
``incomplete_details`` left as it was (:1389-1401). inspect_ai issue 5198 ("Responses bridge
reports max-token truncation as completed (null status, response.completed terminal event)"),
open.

Its chat bridge at the same commit says "stop" for every cut reply: ``openai_chat_choices``
(``src/inspect_ai/model/_openai.py:442``) writes ``openai_finish_reason(choice.stop_reason)``
(:456), which maps "model_length" to "length" and anything else it does not name, "max_tokens"
included, to "stop" (:476-485); the completion comes from ``agent/_bridge/completions.py:106``, and
the sandbox proxy's stream copies its ``finish_reason`` onto the last chunk (``proxy.py``,
:1598-1608). inspect_ai issue 5143 ("Chat agent bridge reports max-token truncation as
finish_reason=stop"), closed by PR 5189 (merged) after this commit: this variant is the version
read. Usage is Inspect's own count (``openai_completion_usage``), not copied.

Not copied: reasoning re-sent as a ``<think>`` message item (the reasoning item stays, with the
status inspect_ai's message would have); the proxy's ``sequence_number`` and ``output_index``;
inspect_ai's own ids and usage.
"""

from __future__ import annotations

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.variants.chat import Chat, ChatEnding
from mockllama.behaviours.variants.signals import EVERY_CALL, Both, Ending, Variant, same

ITEMS = {"message": "completed", "function_call": None, "reasoning": "completed"}
CUT = {"reason": "max_output_tokens"}

STOP = ChatEnding(finish_reason="stop", call_finish_reason="stop")  # the same in the body and the stream

VARIANT = Variant(
    name="inspect-ai",
    server="inspect_ai",
    signal="status null with incomplete_details set, a stream ending with response.completed",
    citation="UKGovernmentBEIS/inspect_ai issue 5198, open",
    body=Both(finished=Ending(None, None, None, ITEMS), cut=Ending(None, CUT, None, ITEMS)),
    stream=Both(finished=Ending("completed", None, None, ITEMS), cut=Ending("completed", CUT, None, ITEMS)),
    terminal=same("response.completed"),
    item_done={"message": "completed", "function_call": "completed", "reasoning": "completed"},
    arguments_done=EVERY_CALL,
    chat=Chat(
        body=STOP,
        stream=STOP,
        source="UKGovernmentBEIS/inspect_ai issue 5143 (fixed later); _openai.py @499e6152",
    ),
)


register(Behaviour(VARIANT.name, VARIANT.description, VARIANT.reply))
