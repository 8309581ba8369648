"""The reply a behaviour gives for a recorded interaction: built once per recording and cached,
then the behaviour's per-request step, if it has one. The behaviours themselves are in
``registry``."""

from __future__ import annotations

from functools import cache

from mockllama.behaviours.registry import BEHAVIOURS, DEFAULT_BEHAVIOUR, Behaviour
from mockllama.behaviours.reply import Reply
from mockllama.recordings.cassettes import Interaction, Scenario

__all__ = ["BEHAVIOURS", "DEFAULT_BEHAVIOUR", "reply_for", "reply_to"]


@cache
def _built(behaviour: Behaviour, interaction: Interaction, scenario: Scenario) -> Reply:
    return behaviour.reply(interaction, scenario)


def reply_for(behaviour: str, interaction: Interaction, scenario: Scenario) -> Reply:
    """Replies depend only on the recording, so each is built once and reused."""
    return _built(BEHAVIOURS[behaviour], interaction, scenario)


def reply_to(behaviour: str, interaction: Interaction, scenario: Scenario, sent: bytes) -> Reply:
    """The reply to one request: the cached reply, then the behaviour's per-request step, if any."""
    chosen = BEHAVIOURS[behaviour]
    reply = _built(chosen, interaction, scenario)
    return reply if chosen.per_request is None else chosen.per_request(reply, interaction, sent)
