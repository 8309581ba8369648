"""spec changes only successful /v1/responses replies: everything else is replayed as recorded.

docs/behaviours.md promises it for chat completions, /v1/messages, the GET routes and recorded errors,
in every behaviour; test_fixed.py checks fixed, this checks spec, both against the YAML itself.
"""

from __future__ import annotations

import pytest

from support import yamlkit
from support.httpkit import call, chunks_on_the_wire, request_bytes
from support.recordings import all_interactions, chosen


def _untouched(interaction) -> bool:
    return interaction.path != "/v1/responses" or interaction.status != 200


def _recorded(scenario, interaction) -> yamlkit.Recorded:
    position = scenario.interactions.index(interaction)
    return yamlkit.read(scenario.name)[position]


def test_every_kind_of_untouched_reply_is_covered():
    kinds = {(i.path, i.status >= 400, i.stream) for _, i in (p.values for p in all_interactions(_untouched))}
    for kind in [
        ("/v1/chat/completions", False, False),
        ("/v1/chat/completions", False, True),
        ("/v1/messages", False, False),
        ("/v1/messages", False, True),
        ("/health", False, False),
        ("/v1/models", False, False),
        ("/props", False, False),
        ("/v1/responses", True, False),
        ("/v1/chat/completions", True, False),
    ]:
        assert kind in kinds


@pytest.mark.parametrize(("scenario", "interaction"), all_interactions(_untouched))
def test_spec_replays_chat_messages_get_routes_and_errors_as_recorded(server, scenario, interaction):
    recorded = _recorded(scenario, interaction)
    assert (recorded.method, recorded.path, recorded.status) == (
        interaction.method,
        interaction.path,
        interaction.status,
    )
    status, headers, body = call(
        server.url, interaction.method, f"/spec{interaction.path}", request_bytes(interaction), chosen(interaction)
    )
    assert (status, body.decode("utf-8")) == (recorded.status, recorded.body)
    assert headers["X-Mockllama-Behaviour"] == "spec"
    assert headers["X-Mockllama-Scenario"] == scenario.name
    assert "X-Mockllama-Decided-By" not in headers


@pytest.mark.parametrize(("scenario", "interaction"), all_interactions(lambda i: _untouched(i) and i.is_event_stream))
def test_spec_streams_of_other_routes_keep_their_recorded_blocks(server, scenario, interaction):
    chunks = chunks_on_the_wire(server.url, f"/spec{interaction.path}", request_bytes(interaction), chosen(interaction))
    assert b"".join(chunks).decode("utf-8") == _recorded(scenario, interaction).body
    assert len(chunks) == len(interaction.events)
