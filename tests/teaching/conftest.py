from __future__ import annotations

import pytest

from mockllama.app import create_app
from mockllama.server.background import BackgroundServer
from support.recordings import LOADED


@pytest.fixture(scope="session")
def server_with_sweeps():
    """One mockllama serving every bundled recording, the sweeps' positions too, as `serve` does:
    the page and explain show each sweep once, whatever the other tests leave out."""
    with BackgroundServer(create_app(LOADED)) as running:
        yield running
