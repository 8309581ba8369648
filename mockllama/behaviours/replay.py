"""The behaviours by name, the cached reply each gives for a recorded interaction, and the
per-request step a behaviour may add to it."""

from __future__ import annotations

from functools import cache

from mockllama.behaviours.echo import echo
from mockllama.behaviours.fixed import fixed
from mockllama.behaviours.reply import Reply, buggy
from mockllama.behaviours.spec import spec
from mockllama.recordings.cassettes import Interaction, Scenario

# buggy: llama-server as it is; fixed: the status correction alone; spec: the correction in the
# full OpenAI Responses wire format.
BEHAVIOURS = {"buggy": buggy, "fixed": fixed, "spec": spec}
DEFAULT_BEHAVIOUR = "buggy"

# Behaviour -> what it does with each request after the cached reply: spec's response objects
# echo the settings the client sent. buggy and fixed replay the cached reply as it is.
PER_REQUEST = {"spec": echo}


@cache
def reply_for(behaviour: str, interaction: Interaction, scenario: Scenario) -> Reply:
    """Replies depend only on the recording, so each is built once and reused."""
    return BEHAVIOURS[behaviour](interaction, scenario)


def reply_to(behaviour: str, interaction: Interaction, scenario: Scenario, sent: bytes) -> Reply:
    """The reply to one request: the cached reply, then the behaviour's per-request step, if any."""
    reply = reply_for(behaviour, interaction, scenario)
    step = PER_REQUEST.get(behaviour)
    return reply if step is None else step(reply, interaction, sent)
