"""The keys a recorded request is looked up by, computed once per recording.

A recording loader is handed :func:`match_keys` (``load_scenarios(..., keys_of=match_keys)``) so the
keys are computed while the cassette is read and kept in the cassette index with it: a start at
10,000 recordings then computes none of them again.
"""

from __future__ import annotations

import json

from mockllama.matching.canonical import canonical_key, canonical_request, first_turn_messages, unordered_key
from mockllama.matching.fingerprint import parts_of
from mockllama.recordings.cassettes import Interaction
from mockllama.recordings.chat_twin import turn_of


def conversation_key(path: str, body, canonical=None) -> str | None:
    """What every turn of one conversation shares: the request with its history cut back to the
    messages before the first model reply. None for a request that carries no reply yet.
    ``canonical``: the body's canonical form, when the caller has it already."""
    canonical = canonical_request(path, body) if canonical is None else canonical
    messages = canonical.get("messages") if isinstance(canonical, dict) else None
    if not isinstance(messages, list) or turn_of(path, body) < 2:
        return None
    return json.dumps({**canonical, "messages": first_turn_messages(messages)}, ensure_ascii=False)


def match_keys(interaction: Interaction) -> tuple[str, str | None, str | None, tuple | None] | None:
    """What the matcher looks this recording up by: the canonical key, the key with every order
    ignored (for a body stored as a mapping, which lost its order), the key a later turn of its
    conversation shares (None for a first turn), and its parts for the 404's nearest search
    (``fingerprint``; None for a body that is not an object). None without a JSON request body."""
    body = interaction.request_json
    if body is None:
        return None
    canonical = canonical_request(interaction.path, body)
    return (canonical_key(interaction.path, body, canonical),
            unordered_key(interaction.path, body, canonical) if interaction.request_raw is None else None,
            conversation_key(interaction.path, body, canonical),
            parts_of(canonical) if isinstance(canonical, dict) else None)


def keys_for(interaction: Interaction) -> tuple[str, str | None, str | None, tuple | None] | None:
    """The interaction's keys as its loader computed them (``keys_of``), else computed now."""
    return interaction.match_keys or match_keys(interaction)
