"""The bundled recordings, loaded once for the whole test run."""

from __future__ import annotations

import json

import pytest

from mockllama.recordings.cassettes import DEFAULT_SETUP, bundled_cassette_dir, load_scenarios
from mockllama.server.app import GET_ROUTES, POST_ROUTES
from support import ROOT

# The sweeps' positions (hundreds of them, each like its neighbours) are tested apart, in
# tests/recordings/test_sweep_positions.py and tests/plugin/test_sweep_fixture.py: the tests that run once per
# recording take the others.
LOADED = load_scenarios([bundled_cassette_dir()])
SCENARIOS = {name: scenario for name, scenario in LOADED.items() if scenario.sweep is None}
SWEEP_POSITIONS = {name: scenario for name, scenario in LOADED.items() if scenario.sweep is not None}
PACKAGE = ROOT / "mockllama" / "recordings"  # the shipped catalogues


def catalogued_names() -> list[str]:
    """Every scenario the shipped catalogues name, read from their JSON rather than through mockllama:
    the bundled set holds exactly these, one cassette each (a sweep's is NAME.sweep.yaml)."""
    files = [PACKAGE / "catalogue.json", *sorted((PACKAGE / "catalogues").glob("*.json"))]
    return [entry["name"] for path in files for entry in json.loads(path.read_text())["scenarios"]]


def chosen(interaction_or_name) -> dict:
    """The header a client sends for a recording of another server set-up than the served one (the
    default): those answer only when chosen by name (one set-up per matching pool). None needed else."""
    name = getattr(interaction_or_name, "scenario", interaction_or_name)
    return {} if SCENARIOS[name].setup == DEFAULT_SETUP else {"X-Mockllama-Scenario": name}


def served(interaction) -> bool:
    """On a route mockllama serves. The others (server-errors' /v1/embeddings and unknown route)
    are there for their error bodies, which only the status=CODE fault sends."""
    return interaction.path in (*POST_ROUTES, *GET_ROUTES)


def all_interactions(only=lambda interaction: True):
    """pytest params (scenario, interaction) for every served recorded interaction that ``only`` keeps."""
    return [
        pytest.param(
            scenario,
            interaction,
            id=f"{scenario.name}-{n}-{interaction.method}{interaction.path}-stream={interaction.stream}",
        )
        for scenario in SCENARIOS.values()
        for n, interaction in enumerate(scenario.interactions)
        if served(interaction) and only(interaction)
    ]


def replayed_responses(server, behaviour: str, name: str, stream: bool):
    """A scenario's recorded /v1/responses request sent as recorded to ``behaviour``: the body, or
    the stream as (event, data) pairs."""
    from support.httpkit import call, request_bytes, sse_pairs

    interaction = SCENARIOS[name].find("POST", "/v1/responses", stream)
    status, _, body = call(
        server.url, "POST", f"/{behaviour}/v1/responses", request_bytes(interaction), chosen(interaction)
    )
    assert status == 200
    return sse_pairs(body) if stream else json.loads(body)
