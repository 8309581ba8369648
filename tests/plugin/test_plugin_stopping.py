"""The end of a pytest session never waits on a reply the plugin's server is stalling (issue 55,
item 3): a session whose only test checks a 1 s client timeout against `stall=` took 63 s, the
server's stop waiting for the stalled handler."""

from __future__ import annotations

import json

pytest_plugins = ["pytester"]

STOPPED_WITHIN = 2.0  # seconds from the test's end to the session's
SLACK = 1.0  # what a loaded 2-core machine may add to it

INNER = """
import json, pathlib, time
import httpx, pytest

def test_a_client_gives_up_on_a_stalled_reply(mockllama):
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(mockllama.base_url("buggy") + "/responses", json={"model": "text-cut-8"},
                   headers={"X-Mockllama-Fault": "stall=600000"}, timeout=1.0)
    pathlib.Path("times.json").write_text(json.dumps({"test_ended": time.monotonic()}))
"""

CONFTEST = """
import json, pathlib, time

def pytest_unconfigure(config):
    path = pathlib.Path("times.json")
    if path.exists():
        times = json.loads(path.read_text())
        path.write_text(json.dumps({**times, "session_ended": time.monotonic()}))
"""


def test_a_session_ends_at_once_after_a_test_left_a_reply_stalled(pytester):
    pytester.makepyfile(test_stalled=INNER)
    pytester.makeconftest(CONFTEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=40)
    result.assert_outcomes(passed=1)
    times = json.loads((pytester.path / "times.json").read_text())
    took = times["session_ended"] - times["test_ended"]
    assert took < STOPPED_WITHIN + SLACK, f"the session ended {took:.1f} s after its last test"
