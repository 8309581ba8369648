"""vLLM: "incomplete" at the top, "completed" on the cut item, and a stream that ends ``response.completed``.

vllm-project/vllm, read file by file from the code index (the repository is too large to fetch,
so there are no line numbers; newer code may differ). ``responses_full_generator`` in
``vllm/entrypoints/openai/responses/serving.py`` (@0001948b) starts from ``status = "completed"``
and sets ``"incomplete"`` when the finish reason is ``length``; ``ResponsesResponse.from_request``
in ``protocol.py`` (@010a69ce) then writes ``incomplete_details: {"reason": "max_output_tokens"}``
(null otherwise), and the response has no ``completed_at`` field. The items
(``DelegatingParser.extract_response_outputs``, ``vllm/parser/abstract_parser.py``) say
"completed" for messages and function calls, the one being cut too (vllm-project/vllm issue 57998,
open), and ``status: null`` for reasoning items. The stream (``responses_stream_generator``; events
from ``streaming_events.py`` @01e4fce0) sends ``response.output_item.done`` with "completed" for
every item (``emit_simple_*_done``), ``response.function_call_arguments.done`` only for a call
whose arguments were streamed as deltas (``emit_simple_tool_call_done``), and ends with
``response.completed`` carrying the non-streamed response, "incomplete" and all: the hybrid
terminal event (PR 45386, "Emit response.incomplete for truncated Responses streams", open).

On ``/v1/chat/completions`` (``vllm/entrypoints/openai/chat_completion/serving.py`` @006c49d4,
read from the code index): the non-streamed reply (``chat_completion_full_generator``) sets
``auto_tools_called`` when the tool parser returned a call under ``tool_choice`` "auto" (vLLM's
``check_tool_usage`` validator makes a request with tools and no ``tool_choice`` "auto"), and writes
``finish_reason="tool_calls" if is_finish_reason_tool_calls else output.finish_reason`` where
``is_finish_reason_tool_calls = auto_tools_called or (tool_choice == "required" and
output.finish_reason == "stop")``: a cut auto call says "tool_calls", a cut "required" call keeps
"length" (vllm-project/vllm issue 58228, open). Whether a call was parsed is the tool parser's:
hermes (``vllm/tool_parsers/hermes_tool_parser.py``, ``extract_tool_calls``) ``json.loads`` each
``<tool_call>`` region and returns no call when that fails, so a call cut mid-arguments (tool-cut-20)
keeps "length"; here "parsed" is every recorded call's arguments being valid JSON. The stream
(``chat_completion_stream_generator``) relabels only when ``output.finish_reason == "stop"``, so it
says "length" (issue 53269 and PR 53270, closed, for the older unconditional relabel). Usage counts
every generated token in both. Not copied on chat: the raw ``<tool_call>`` text vLLM returns as
``content`` when no call parsed, and other parsers' partial parsing (issue 58228 saw "tool_calls"
with unterminated arguments under a qwen3 XML parser).

Not copied: the gpt-oss (Harmony) path, whose cut item says "incomplete" or "in_progress"; the
new ids of the terminal response's rebuilt items; vLLM's own usage and event framing.
"""

from __future__ import annotations

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.variants.chat import HONEST, NOT_SENT, Chat, ChatEnding
from mockllama.behaviours.variants.signals import ABSENT, CALLS_WITH_A_DELTA, Both, Ending, Variant, same

ITEMS = {"message": "completed", "function_call": "completed", "reasoning": None}
ENDING = Both(
    finished=Ending("completed", None, ABSENT, ITEMS),
    cut=Ending("incomplete", {"reason": "max_output_tokens"}, ABSENT, ITEMS),
)

VARIANT = Variant(
    name="vllm",
    server="vLLM",
    signal="'incomplete' at the top, 'completed' on the cut item, a stream ending with response.completed",
    citation="vllm-project/vllm issue 57998 and PR 45386, open",
    body=ENDING,
    stream=ENDING,
    terminal=same("response.completed"),
    item_done={"message": "completed", "function_call": "completed", "reasoning": "completed"},
    arguments_done=CALLS_WITH_A_DELTA,
    chat=Chat(
        body=ChatEnding(call_finish_reason="tool_calls", call_tool_choices=("auto", NOT_SENT)),
        stream=HONEST,
        source="vllm-project/vllm issue 58228, open; serving.py @006c49d4",
    ),
)


register(Behaviour(VARIANT.name, VARIANT.description, VARIANT.reply))
