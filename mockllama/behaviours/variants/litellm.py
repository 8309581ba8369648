"""LiteLLM's Responses-over-chat bridge: "incomplete" with its reason, "completed" on a cut function call.

BerriAI/litellm 1.110.2, as installed from PyPI and run against a test double of llama-server (the
``buggy`` behaviour). LiteLLM (its SDK's ``litellm.responses``, which its proxy's ``/v1/responses``
calls) serves the Responses API two ways. A provider with a Responses config of its own (``openai/``
and ``hosted_vllm/``: ``ProviderConfigManager._get_python_responses_api_config``, ``utils.py:10676``)
is sent the request as it came, and llama-server's ``status`` and items come back unchanged
(``"completed"`` on a cut reply): that is ``buggy``, no variant. One change there: a model missing
from LiteLLM's price map (``supports_native_streaming``, ``utils.py:3298``, is False for it, as for
every local GGUF name) gets a faked stream, made from a non-streamed request
(``OpenAIResponsesAPIConfig.should_fake_stream``, ``llms/openai/responses/transformation.py:1202``;
``build_synthetic_response_events``, ``responses/streaming_iterator.py:1953``) that always ends with
``response.completed`` (:2105-2108) around the backend's status: in front of an honest server, the
hybrid terminal event. A provider
without one (``llamafile/``, any chat-only provider), ``openai/chat_completions/<model>`` or
``use_chat_completions_api=True`` (``_bridges_to_chat_completions``, ``responses/main.py:609``) goes
through the bridge, which asks the backend's ``/v1/chat/completions`` and builds the response from
its ``finish_reason``. That bridge is this variant.

``responses/litellm_completion_transformation/transformation.py``:
``transform_chat_completion_response_to_responses_api_response`` (:3433) sets ``status`` from
``_map_chat_completion_finish_reason_to_responses_status`` (:3268; "length" -> "incomplete", :3289-3290)
and ``incomplete_details`` from ``_incomplete_details_for_finish_reason`` (:3308; "length" ->
``{"reason": "max_output_tokens"}``, :203), null when the reply finished; the response model has no
``completed_at`` field, so there is none. Message items (``_extract_message_output_items``, :3756)
and reasoning items (``_extract_reasoning_output_items``, :3631) take the response's status, so a cut
one says "incomplete"; a function_call item says ``function_definition.get("status") or
"completed"`` (:3206), and a chat tool call has no status: "completed", the cut call too. The stream
(``litellm_completion_transformation/streaming_iterator.py``) sends ``response.output_item.done``
with "completed" for a message (``create_output_item_done_event``, :1065) and a call (:613), and no
status for reasoning (``create_reasoning_output_item_done_event``, :1073);
``response.function_call_arguments.done`` for every call (``_queue_final_tool_call_done_events``,
:606); and ends with ``response.incomplete`` when the built response says "incomplete", else
``response.completed`` (``_emit_terminal_response_event``, :1617-1648), carrying the same response as
the non-streamed body. BerriAI/litellm PR 40833 (open) describes an older bridge that left
``incomplete_details`` null and ended the stream ``response.completed``; 1.110.2 does neither.

Its ``/v1/chat/completions`` in front of llama-server is honest: ``map_finish_reason`` keeps
"length" (``litellm_core_utils/core_helpers.py:418``), the stream relabels only "stop" after a tool
call as "tool_calls" (``_normalize_tool_call_finish_reason``, ``streaming_handler.py:2115``), and
usage is the backend's: a cut reply, a parsed call or not, says "length" with ``max_tokens`` tokens.

Not copied: LiteLLM's own ids (``resp_`` ids that encode the deployment), the message item it writes
for the empty text before a call, the items the stream's terminal response leaves out, its event framing and usage
shape; and its chat completions over a backend's Responses API (``openai/responses/<model>``,
``completion_extras/litellm_responses_transformation``), which takes llama-server's "completed" for
a finished reply and says "stop". Whether its proxy writes the fields that are None as null or leaves
them out was not read: the proxy's extras are not installed here, so the SDK's objects are the
source.
"""

from __future__ import annotations

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.variants.chat import HONEST, Chat
from mockllama.behaviours.variants.signals import ABSENT, EVERY_CALL, Both, Ending, Variant

FINISHED_ITEMS = {"message": "completed", "function_call": "completed", "reasoning": "completed"}
CUT_ITEMS = {"message": "incomplete", "function_call": "completed", "reasoning": "incomplete"}
ENDING = Both(
    finished=Ending("completed", None, ABSENT, FINISHED_ITEMS),
    cut=Ending("incomplete", {"reason": "max_output_tokens"}, ABSENT, CUT_ITEMS),
)

VARIANT = Variant(
    name="litellm",
    server="LiteLLM",
    signal="'incomplete' with its reason and a stream ending response.incomplete, but 'completed' on a cut "
    "function call and on every streamed item",
    citation="BerriAI/litellm 1.110.2, its chat bridge; no issue filed",
    body=ENDING,
    stream=ENDING,
    terminal=Both("response.completed", "response.incomplete"),
    item_done={"message": "completed", "function_call": "completed", "reasoning": ABSENT},
    arguments_done=EVERY_CALL,
    chat=Chat(HONEST, HONEST, source="BerriAI/litellm 1.110.2 core_helpers.py, streaming_handler.py"),
)


register(Behaviour(VARIANT.name, VARIANT.description, VARIANT.reply))
