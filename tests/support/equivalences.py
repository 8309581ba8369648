"""The request pairs behind mockllama's matching rules, shared by the offline and live tiers: each
rule of mockllama/matching/equivalences.py carries its own (``cases``, ``unlike``).

EQUIVALENT pairs must get one canonical key (offline) and one generation from llama-server (live);
DIFFERENT pairs must get two keys and two generations.
"""

from __future__ import annotations

from mockllama.matching.equivalences import (
    BASE,
    CHAT_BASE,
    COUNT,
    MESSAGES_BASE,
    RULES,
    catalogue,
    reordered_properties,
)
from mockllama.wire.routes import CHAT_PATH as CHAT
from mockllama.wire.routes import MESSAGES_PATH as MESSAGES
from mockllama.wire.routes import RESPONSES_PATH as RESPONSES

__all__ = ["BASE", "CATALOGUE", "CHAT", "CHAT_BASE", "COUNT", "MESSAGES", "MESSAGES_BASE", "RESPONSES"]
__all__ += ["DIFFERENT", "EQUIVALENT", "reordered_properties"]

CATALOGUE = catalogue()
# (name, path, form A, form B): llama-server generates the same from both
EQUIVALENT = [case for rule in RULES for case in rule.cases()]
# (name, path, form A, form B): llama-server generates something else, so they must not match
DIFFERENT = [case for rule in RULES for case in rule.unlike()]
