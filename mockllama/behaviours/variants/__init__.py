"""Other servers' ways of reporting a reply cut at ``max_output_tokens``, one module per server.

Each declares the signals that server's code writes (``signals.Variant``, cited in the module's
docstring) and gives the behaviour that replays llama-server's recordings with those signals and
nothing else, on ``/v1/responses`` and on ``/v1/chat/completions``. ``SERVERS`` lists them all;
``VARIANTS`` those whose Responses signals were read in that server's source, by which ``check``
names a server.

``llama_server`` is stock llama-server's own declaration: its behaviour is ``buggy``.
"""

import json

from mockllama.behaviours.registry import BEHAVIOURS
from mockllama.behaviours.variants import (
    aimock,
    chat,
    inspect_ai,
    litellm,
    llama_server,
    lmstudio,
    localai,
    ollama,
    sglang,
    signals,
    vllm,
)

SERVERS = (
    llama_server.VARIANT,
    ollama.VARIANT,
    vllm.VARIANT,
    localai.VARIANT,
    sglang.VARIANT,
    inspect_ai.VARIANT,
    aimock.VARIANT,
    litellm.VARIANT,
    lmstudio.VARIANT,
)
# A server known only by its chat side would be named for llama-server's Responses signals: not by check.
VARIANTS = tuple(variant for variant in SERVERS if variant.responses_read)
# The variant behaviours' replies by name (the URL prefix): stock llama-server's is ``buggy``.
REPLIES = {variant.name: variant.reply for variant in SERVERS if variant is not llama_server.VARIANT}


def own_behaviours() -> list[str]:
    """Every registered behaviour but the other servers' variants: llama-server's own (buggy), the
    honest ones, and any other that is no server's variant, in the registry's order."""
    return [name for name in BEHAVIOURS if name not in REPLIES]


def _shown(value) -> str:
    """A declared value as the docs table shows it: JSON, or what a marker means."""
    if value is signals.ABSENT:
        return "absent"
    if value is signals.SET:
        return "a time"
    return f"`{json.dumps(value)}`"


def markdown_table() -> str:
    """What each variant behaviour writes on a reply cut at max_output_tokens (docs/variants.md)."""
    rows = [
        "| behaviour (URL prefix) | server | `status` | `incomplete_details` | `completed_at` | items: message, "
        "function_call, reasoning | stream's terminal event (its response's `status`) | "
        "`function_call_arguments.done` | source |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for variant in VARIANTS:
        body, stream = variant.body.when(True), variant.stream.when(True)  # the cut reply's Ending
        items = ", ".join(
            _shown(body.items.get(kind, "as recorded")) for kind in ("message", "function_call", "reasoning")
        )
        rows.append(
            f"| `/{variant.name}/v1` | {variant.server} | {_shown(body.status)} | {_shown(body.incomplete_details)} | "
            f"{_shown(body.completed_at)} | {items} | `{variant.terminal.when(True)}` ({_shown(stream.status)}) | "
            f"{variant.arguments_done} | {variant.citation} |"
        )
    return "\n".join(rows)


def chat_markdown_table() -> str:
    """What each server's /v1/chat/completions says of a reply cut at max_tokens (docs/variants.md)."""
    rows = [
        "| behaviour (URL prefix) | server | `finish_reason` of a cut reply | the same, its tool call parsed | "
        "stream's last `finish_reason` (no call / a parsed call) | `usage.completion_tokens` | source |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    return "\n".join(rows + [chat.markdown_row(variant.name, variant.server, variant.chat) for variant in SERVERS])
