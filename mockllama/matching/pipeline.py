"""Matching's one way: a request, its canonical form (``canonical``), its keys (``keys``).

Each stage reads only what the one before it made: the canonical form is made from the request
alone, and every key from the canonical form alone. A recording goes through once, as its cassette
is read: a loader is handed :func:`match_keys` (``load_scenarios(..., keys_of=match_keys)``), and
the keys are kept in the cassette index with the recording, so a start at 10,000 recordings
computes none of them again. With them go the parts of its form in its client's words that the
404's nearest search compares (``words``, ``fingerprint``).
"""

from __future__ import annotations

from mockllama.matching.canonical import canonical_request
from mockllama.matching.fingerprint import parts_of
from mockllama.matching.keys import conversation_key, exact_key, unordered_key
from mockllama.matching.words import client_form
from mockllama.recordings.cassettes import Interaction


def canonical_key(path: str, body) -> str:
    """The exact-match key of a request body sent to ``path``."""
    return exact_key(canonical_request(path, body))


# The parts of the last few compared forms, by what decides them: the route, whether a Responses
# request has instructions (its first chat message is then ``instructions``) and the canonical key.
# Cassette directories repeat requests (one catalogue recorded from several builds or set-ups).
# For a body parsed from JSON text, equal keys are equal forms: JSON text tells every value and
# type apart.
_RECENT_PARTS: dict[tuple, tuple] = {}


def match_keys(interaction: Interaction) -> tuple[str, str | None, str | None, tuple | None] | None:
    """What the matcher looks this recording up by: the canonical key, the key with every order
    ignored (for a body stored as a mapping, which lost its order), the key a later turn of its
    conversation shares (None for a first turn), and the parts of its form in its client's words
    for the 404's nearest search (None for a body that is not an object). None without a JSON
    request body."""
    body, path = interaction.request_json, interaction.path
    if body is None:
        return None
    canonical = canonical_request(path, body)
    key = exact_key(canonical)
    stored_as_mapping = interaction.request_raw is None
    orderless = unordered_key(canonical) if stored_as_mapping else None
    later = conversation_key(canonical, interaction.turn)
    if not isinstance(body, dict) or not isinstance(canonical, dict):
        return key, orderless, later, None
    # A mapping from YAML may have keys that are not strings: its parts are computed afresh.
    decided_by = None if stored_as_mapping else (path, "instructions" in body, key)
    parts = _RECENT_PARTS.get(decided_by) if decided_by is not None else None
    if parts is None:
        parts = parts_of(client_form(path, body, canonical))
        if decided_by is not None:
            if len(_RECENT_PARTS) >= 64:
                _RECENT_PARTS.clear()
            _RECENT_PARTS[decided_by] = parts
    return key, orderless, later, parts


def keys_for(interaction: Interaction) -> tuple[str, str | None, str | None, tuple | None]:
    """The interaction's keys as its loader computed them (``keys_of``), else computed now. Only for
    a recording with a JSON request body: the others have none."""
    keys = interaction.match_keys or match_keys(interaction)
    assert keys is not None, "keys_for is asked only for a recording with a JSON request body"
    return keys
