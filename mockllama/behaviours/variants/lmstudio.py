"""LM Studio: ``usage.completion_tokens`` one less than ``max_tokens`` on a chat reply cut at its limit.

LM Studio's server is closed source, so nothing here is read in its code: the signal is the one its
bug tracker reports. lmstudio-ai/lmstudio-bug-tracker issue 2335 ("``completion_tokens`` is one
less than ``max_tokens`` when a generation stops at the token limit", open, LM Studio 0.4.22,
2026-08-29): a chat completion stopped at ``max_tokens`` says ``finish_reason: "length"`` (honest)
but ``usage.completion_tokens = max_tokens - 1`` (``max_tokens`` 1, 5, 20 give 0, 4, 19), with
``total_tokens`` the prompt plus that count; model- and reasoning-independent. Copied: on every
chat reply whose recorded ``finish_reason`` is "length", ``completion_tokens`` and ``total_tokens``
one less, in the non-streamed body and in any streamed chunk that carries usage (the issue does not
confine it to either; llama-server's recorded streams carry no usage unless asked, and then there
is nothing to change). A reply that finished, even in exactly its limit, is counted as recorded.

Not copied: the same under-count in ``completion_tokens_details.reasoning_tokens`` (llama-server's
usage has no such field); issue 1829 ("Server silently caps generation at ~10K-16K tokens
regardless of max_tokens", open), a hidden cap that ends a reply early without a length stop,
which no recording here holds; LM Studio's own ids, ``stats`` and event framing. Its
``/v1/responses``: no issue or source found that says what it writes on a cut reply, so it is
llama-server's (``buggy``'s declaration, unchanged), and ``check`` names no server by it.
"""

from __future__ import annotations

from dataclasses import replace

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.variants import llama_server
from mockllama.behaviours.variants.chat import Chat, ChatEnding

UNDER_COUNT = ChatEnding(completion_tokens=-1)  # max_tokens - 1 where llama-server counted max_tokens

VARIANT = replace(
    llama_server.VARIANT,  # /v1/responses: nothing cited, so stock llama-server's signals
    name="lmstudio",
    server="LM Studio",
    signal="usage.completion_tokens one less than max_tokens on a chat reply cut at its limit",
    citation="lmstudio-ai/lmstudio-bug-tracker issue 2335, open",
    chat=Chat(UNDER_COUNT, UNDER_COUNT, source="lmstudio-ai/lmstudio-bug-tracker issue 2335, open"),
    responses_read=False,
)


register(Behaviour(VARIANT.name, VARIANT.description, VARIANT.reply))
