"""The session's server starts while pytest collects, as soon as it sees a test that asks for it
(issue 56): the first test that asks finds it running. A session none of whose selected tests asks
starts none. How long a session takes is the benchmark's to say (benchmarks/startup.py), not a test's."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

# Writes what the session showed at the end of its collection and at its end to seen.json.
CONFTEST = """
import json, pathlib, sys, threading
import pytest
from mockllama.pytest_plugin.starting import STARTED

SEEN = {}

@pytest.hookimpl(trylast=True)
def pytest_itemcollected(item):
    if "mockllama" in item.fixturenames:
        SEEN.setdefault("begun as the first test that asks was collected", STARTED in item.config.stash)

@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    SEEN["begun while collecting"] = STARTED in session.config.stash
    SEEN["server loaded while collecting"] = "mockllama.server.app" in sys.modules

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    SEEN["threads at the end"] = sorted(t.name for t in threading.enumerate() if t.name.startswith("mockllama"))
    pathlib.Path("seen.json").write_text(json.dumps(SEEN))
"""

# The first test asks for no fixture, yet the server the plugin began while collecting answers it;
# the second is handed that same server by the fixture.
EARLY = """
import pathlib, urllib.request
from mockllama.pytest_plugin.starting import STARTED

def test_the_server_runs_before_any_fixture_asks_for_it(request):
    server = request.config.stash[STARTED].server()
    with urllib.request.urlopen(server.url + "/health", timeout=10) as reply:
        assert reply.status == 200
    pathlib.Path("early.txt").write_text(server.url)

def test_the_fixture_hands_out_the_server_begun_while_collecting(mockllama):
    assert mockllama.url == pathlib.Path("early.txt").read_text()
"""

NOTHING = "def test_nothing():\n    pass\n"
ASKS = "def test_asks(mockllama):\n    pass\n"
# Deselects the test that asks, as a plugin may, after the plugin saw it collected.
DESELECTING = """
def pytest_collection_modifyitems(config, items):
    config.hook.pytest_deselected(items=[item for item in items if item.name == "test_asks"])
    items[:] = [item for item in items if item.name != "test_asks"]
"""


def _seen(pytester) -> dict:
    return json.loads((pytester.path / "seen.json").read_text())


def test_the_server_starts_while_pytest_collects_and_the_fixture_hands_out_that_one(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_early=EARLY)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    result.assert_outcomes(passed=2)
    seen = _seen(pytester)
    assert seen["begun as the first test that asks was collected"]
    assert seen["begun while collecting"] and seen["server loaded while collecting"]
    assert seen["threads at the end"] == []  # stopped with the session


def test_a_test_that_asks_only_as_it_runs_still_gets_the_server(pytester):
    """``request.getfixturevalue`` is not seen by the collection: the fixture starts the server then."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_late="def test_late(request):\n    assert request.getfixturevalue('mockllama').url.startswith('http://')\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    result.assert_outcomes(passed=1)
    seen = _seen(pytester)
    assert not seen["begun while collecting"] and seen["threads at the end"] == []


@pytest.mark.parametrize(
    ("tests", "conftest", "options", "outcomes"),
    [
        pytest.param(NOTHING, "", (), {"passed": 1}, id="no-test-asks"),
        pytest.param(ASKS, "", ("--collect-only",), {}, id="collect-only"),
        pytest.param(NOTHING + ASKS, "", ("-k", "nothing"), {"passed": 1, "deselected": 1}, id="deselected-by-k"),
        pytest.param(NOTHING + ASKS, DESELECTING, (), {"passed": 1, "deselected": 1}, id="deselected-by-a-plugin"),
    ],
)
def test_a_session_whose_selected_tests_do_not_ask_runs_no_server(pytester, tests, conftest, options, outcomes):
    pytester.makeconftest(CONFTEST + conftest)
    pytester.makepyfile(test_inner=tests)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *options, timeout=60)
    assert result.ret == 0
    result.assert_outcomes(**outcomes)
    seen = _seen(pytester)
    assert not seen["begun while collecting"] and seen["threads at the end"] == []
    if not conftest:  # a plugin that deselects does so once the start has begun, which then ends
        assert not seen["server loaded while collecting"]
