"""The buggy behaviour: the recording as it is, which is what llama-server really sends."""

from __future__ import annotations

from mockllama.behaviours.registry import Behaviour, register
from mockllama.behaviours.reply import Reply, recorded_reply
from mockllama.recordings.cassettes import Interaction, Scenario


def buggy(interaction: Interaction, scenario: Scenario) -> Reply:
    return recorded_reply(interaction)


register(Behaviour("buggy", "exactly what llama-server b11434 sent, byte for byte", buggy))
