from __future__ import annotations

import pytest

from mockllama.app import ServeOptions, create_app
from mockllama.server.background import BackgroundServer
from support.observed import ObservedServer
from support.recordings import SCENARIOS


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
    """Start extra servers with other options (``ServeOptions``'s fields); all are stopped after the test."""
    started = []

    def start(**settings) -> BackgroundServer:
        running = BackgroundServer(create_app(SCENARIOS, ServeOptions(**settings))).start()
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()


@pytest.fixture(scope="module")
def observed():
    """mockllama with a log of the headers of every reply it sent (tests/support/observed.py), per module."""
    server = ObservedServer()
    with server.background:
        yield server


@pytest.fixture
def replies(observed):
    """That server, its log emptied for this test."""
    observed.replies.clear()
    return observed
