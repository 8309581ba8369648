"""The behaviours by name, and the cached reply each gives for a recorded interaction."""

from __future__ import annotations

from functools import lru_cache

from .behaviours import Reply, buggy, fixed
from .cassettes import Interaction, Scenario
from .spec import spec

# buggy: llama-server as it is; fixed: the status correction alone; spec: the correction in the
# full OpenAI Responses wire format.
BEHAVIOURS = {"buggy": buggy, "fixed": fixed, "spec": spec}
DEFAULT_BEHAVIOUR = "buggy"


@lru_cache(maxsize=None)
def reply_for(behaviour: str, interaction: Interaction, scenario: Scenario) -> Reply:
    """Replies depend only on the recording, so each is built once and reused."""
    return BEHAVIOURS[behaviour](interaction, scenario)
