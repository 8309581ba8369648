"""aimock: "incomplete" without a reason, items "completed", and a stream that ends ``response.completed``.

CopilotKit/aimock at c9af8c332cddafcc51668b810a75ac21f53880fc, ``src/responses.ts``, a mock server
whose "cut" is a fixture's ``finishReason``: ``responsesStatus`` (:256-263) maps ``length`` to
``"incomplete"`` and ``stop``/``tool_calls`` to ``"completed"``. The envelope
(``buildResponseEnvelope``, :929-943) holds id, object, created_at, model, status, output and
usage only: no ``incomplete_details`` and no ``completed_at``. Message items say "completed" (:921,
:1120), function_call items "completed" (:1006, :1112), reasoning items have no status
(``buildReasoningOutputItem``, :504-518). Every stream ends with ``type: "response.completed"``
(:323, :421, :1090) carrying the mapped status (:329, :427, :1096), sends
``response.function_call_arguments.done`` for every call (:392-398, :864), and
``response.output_item.done`` with "completed" for calls (:406-411, :876-878) and messages
(:808-813). No aimock issue or PR on this was found.

Not copied: aimock's own ids, usage and event framing (it writes ``event: <type>`` lines too).
"""

from __future__ import annotations

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.variants.chat import UNREAD_CHAT
from mockllama.behaviours.variants.signals import ABSENT, EVERY_CALL, Both, Ending, Variant, same

ITEMS = {"message": "completed", "function_call": "completed", "reasoning": ABSENT}
ENDING = Both(
    finished=Ending("completed", ABSENT, ABSENT, ITEMS),
    cut=Ending("incomplete", ABSENT, ABSENT, ITEMS),
)

VARIANT = Variant(
    name="aimock",
    server="aimock",
    signal="'incomplete' without incomplete_details, 'completed' on the cut item, a stream ending with "
    "response.completed",
    citation="CopilotKit/aimock, no issue filed",
    body=ENDING,
    stream=ENDING,
    terminal=same("response.completed"),
    item_done=ITEMS,
    arguments_done=EVERY_CALL,
    chat=UNREAD_CHAT,
)


register(Behaviour(VARIANT.name, VARIANT.description, VARIANT.reply))
