from __future__ import annotations

import pytest

from mockllama.background import BackgroundServer
from mockllama.cassettes import bundled_cassette_dir, load_scenarios
from mockllama.server import create_app

SCENARIOS = load_scenarios([bundled_cassette_dir()])


def all_interactions(only=lambda interaction: True):
    """pytest params (scenario, interaction) for every recorded interaction that ``only`` keeps."""
    return [
        pytest.param(scenario, interaction, id=f"{scenario.name}-{n}-{interaction.method}{interaction.path}-stream={interaction.stream}")
        for scenario in SCENARIOS.values()
        for n, interaction in enumerate(scenario.interactions)
        if only(interaction)
    ]


@pytest.fixture(scope="session")
def scenarios():
    return SCENARIOS


@pytest.fixture(scope="session")
def server():
    """One mockllama on a free loopback port, default behaviour buggy, for the whole session."""
    with BackgroundServer(create_app(SCENARIOS)) as running:
        yield running


@pytest.fixture
def start_server():
    """Start extra servers with other settings; all are stopped after the test."""
    started = []

    def start(**settings) -> BackgroundServer:
        running = BackgroundServer(create_app(SCENARIOS, **settings)).start()
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()
