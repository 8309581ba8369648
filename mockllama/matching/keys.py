"""The keys a recorded request is looked up by, computed once per recording.

A recording loader is handed :func:`match_keys` (``load_scenarios(..., keys_of=match_keys)``) so the
keys are computed while the cassette is read and kept in the cassette index with it: a start at
10,000 recordings then computes none of them again.
"""

from __future__ import annotations

from mockllama.matching.canonical import canonical_key, canonical_request, first_exchange, unordered_key
from mockllama.matching.fingerprint import parts_of
from mockllama.matching.words import client_form
from mockllama.recordings.cassettes import Interaction
from mockllama.recordings.chat_twin import turn_of


def conversation_key(path: str, body, canonical=None, turn: int | None = None) -> str | None:
    """What every later turn of one conversation shares: the request with its history cut back to the
    end of the model's first reply (``first_exchange``), so that a later turn matches only a
    conversation whose first turn and first reply its history really holds, a prefill included.
    None for a request that carries no reply yet.
    ``canonical``, ``turn``: the body's canonical form and turn, when the caller has them already."""
    canonical = canonical_request(path, body) if canonical is None else canonical
    messages = canonical.get("messages") if isinstance(canonical, dict) else None
    if not isinstance(messages, list) or (turn_of(path, body) if turn is None else turn) < 2:
        return None
    return canonical_key(path, None, {**canonical, "messages": first_exchange(messages)})


def match_keys(interaction: Interaction) -> tuple[str, str | None, str | None, tuple | None] | None:
    """What the matcher looks this recording up by: the canonical key, the key with every order
    ignored (for a body stored as a mapping, which lost its order), the key a later turn of its
    conversation shares (None for a first turn), and the parts of its form in its client's words
    for the 404's nearest search (``fingerprint``, ``words``; None for a body that is not an
    object). None without a JSON request body."""
    body = interaction.request_json
    if body is None:
        return None
    canonical = canonical_request(interaction.path, body)
    key = canonical_key(interaction.path, body, canonical)
    if not isinstance(body, dict) or not isinstance(canonical, dict):
        parts = None
    elif interaction.request_raw is None:  # a mapping from YAML: its keys need not be strings
        parts = parts_of(client_form(interaction.path, body, canonical))
    else:
        parts = _parts_by_key((interaction.path, "instructions" in body, key), interaction.path, body, canonical)
    return (
        key,
        unordered_key(interaction.path, body, canonical) if interaction.request_raw is None else None,
        conversation_key(interaction.path, body, canonical, interaction.turn),
        parts,
    )


# The parts of the last few compared forms, by what decides them: the route, whether a Responses
# request has instructions (its first chat message is then ``instructions``) and the canonical key.
# Cassette directories repeat requests (one catalogue recorded from several builds or set-ups).
# For a body parsed from JSON text, equal keys are equal forms: JSON text tells every value and
# type apart.
_RECENT_PARTS: dict[tuple, tuple] = {}


def _parts_by_key(decided_by: tuple, path: str, body: dict, canonical: dict) -> tuple:
    parts = _RECENT_PARTS.get(decided_by)
    if parts is None:
        if len(_RECENT_PARTS) >= 64:
            _RECENT_PARTS.clear()
        parts = _RECENT_PARTS[decided_by] = parts_of(client_form(path, body, canonical))
    return parts


def keys_for(interaction: Interaction) -> tuple[str, str | None, str | None, tuple | None]:
    """The interaction's keys as its loader computed them (``keys_of``), else computed now. Only for
    a recording with a JSON request body: the others have none."""
    keys = interaction.match_keys or match_keys(interaction)
    assert keys is not None, "keys_for is asked only for a recording with a JSON request body"
    return keys
