"""The bundled recordings, loaded once for the whole test run."""

from __future__ import annotations

import pytest

from mockllama.cassettes import bundled_cassette_dir, load_scenarios

SCENARIOS = load_scenarios([bundled_cassette_dir()])


def all_interactions(only=lambda interaction: True):
    """pytest params (scenario, interaction) for every recorded interaction that ``only`` keeps."""
    return [
        pytest.param(scenario, interaction, id=f"{scenario.name}-{n}-{interaction.method}{interaction.path}-stream={interaction.stream}")
        for scenario in SCENARIOS.values()
        for n, interaction in enumerate(scenario.interactions)
        if only(interaction)
    ]
