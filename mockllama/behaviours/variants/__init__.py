"""Other servers' ways of reporting a reply cut at ``max_output_tokens``, one module per server.

Each declares the signals that server's code writes (``signals.Variant``, cited in the module's
docstring) and gives the behaviour that replays llama-server's recordings with those signals and
nothing else. ``VARIANTS`` lists them; ``check`` names a server by them.

``llama_server`` is stock llama-server's own declaration: its behaviour is ``buggy``.
"""

from mockllama.behaviours.variants import aimock, inspect_ai, llama_server, localai, ollama, sglang, vllm

VARIANTS = (
    llama_server.VARIANT,
    ollama.VARIANT,
    vllm.VARIANT,
    localai.VARIANT,
    sglang.VARIANT,
    inspect_ai.VARIANT,
    aimock.VARIANT,
)
# The variant behaviours' replies by name (the URL prefix): stock llama-server's is ``buggy``.
REPLIES = {
    "ollama": ollama.ollama,
    "vllm": vllm.vllm,
    "localai": localai.localai,
    "sglang": sglang.sglang,
    "inspect-ai": inspect_ai.inspect_ai,
    "aimock": aimock.aimock,
}
