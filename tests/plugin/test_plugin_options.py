"""The plugin's options, run in a separate pytest as a client author would run it."""

from __future__ import annotations

import shutil

import pytest

from mockllama.app import ServeOptions
from mockllama.pytest_plugin.session import base_url_behaviours
from mockllama.recordings.cassettes import bundled_cassette_dir
from mockllama.server.option_fields import options_of

pytest_plugins = ["pytester"]

INNER_TEST = """
import openai

def test_extra_scenario_is_served(mockllama):
    assert "my-extra" in mockllama.scenarios and "text-cut-8" in mockllama.scenarios
    client = openai.OpenAI(base_url=mockllama.base_url("fixed"), api_key="unused")
    assert client.responses.create(model="my-extra", input="anything").status == "incomplete"

def test_base_url_param(mockllama_base_url):
    assert mockllama_base_url.endswith("/v1")
"""


@pytest.fixture
def extra_dir(pytester):
    """A cassette directory of the client author's: here, a real recording under a new name."""
    directory = pytester.path / "my-cassettes"
    directory.mkdir()
    source = next(bundled_cassette_dir().rglob("tool-cut-8.yaml"))
    shutil.copy(source, directory / "my-extra.yaml")
    pytester.makepyfile(test_inner=INNER_TEST)
    return directory


def test_command_line_option_adds_a_cassette_directory(pytester, extra_dir):
    result = pytester.runpytest_subprocess("--mockllama-cassettes", str(extra_dir), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1 + len(base_url_behaviours()))  # test_base_url_param once per behaviour


def test_ini_option_adds_a_cassette_directory(pytester, extra_dir):
    pytester.makeini("[pytest]\nmockllama_cassettes =\n    my-cassettes\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1 + len(base_url_behaviours()))  # test_base_url_param once per behaviour


def test_without_the_option_the_extra_scenario_is_missing(pytester, extra_dir):
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(base_url_behaviours()), failed=1)


def test_a_corrupt_extra_directory_fails_with_the_file_and_reason(pytester):
    broken = pytester.path / "broken"
    broken.mkdir()
    (broken / "bad.yaml").write_text("interactions: [")
    pytester.makepyfile(test_inner="def test_x(mockllama):\n    pass\n")
    result = pytester.runpytest_subprocess("--mockllama-cassettes", str(broken), "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.re_match_lines([r".*mockllama: cannot load cassette .*bad\.yaml: not valid YAML.*"])
    result.stdout.no_fnmatch_line("*Traceback*")


JOURNAL_TESTS = """
import openai

def _ask(mockllama, n):
    client = openai.OpenAI(base_url=mockllama.base_url("fixed"), api_key="unused", max_retries=0)
    for index in range(n):
        client.responses.create(model="text-cut-8", input=f"ask {index}")

def test_first(mockllama, mockllama_journal):
    _ask(mockllama, 3)
    assert [e.body["input"] for e in mockllama_journal] == EXPECTED_FIRST

def test_second_sees_only_its_own(mockllama, mockllama_journal):
    _ask(mockllama, 1)
    assert [e.body["input"] for e in mockllama_journal] == ["ask 0"]
    assert [e.body["input"] for e in mockllama.journal] == EXPECTED_SESSION
"""


@pytest.mark.parametrize(
    ("option", "first", "session"),
    [
        ([], ["ask 0", "ask 1", "ask 2"], ["ask 0", "ask 1", "ask 2", "ask 0"]),
        (["--mockllama-journal-size", "2"], ["ask 1", "ask 2"], ["ask 2", "ask 0"]),  # a ring of the last two
    ],
)
def test_journal_fixture_per_test_and_journal_size_option(pytester, option, first, session):
    tests = JOURNAL_TESTS.replace("EXPECTED_FIRST", repr(first)).replace("EXPECTED_SESSION", repr(session))
    pytester.makepyfile(test_inner=tests)
    result = pytester.runpytest_subprocess(*option, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_a_bad_journal_size_fails_with_a_message(pytester):
    pytester.makeini("[pytest]\nmockllama_journal_size = lots\n")
    pytester.makepyfile(test_inner="def test_x(mockllama):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.re_match_lines(
        [r".*mockllama: 'lots' is not a whole number >= 0 \(the ini key mockllama_journal_size\)"]
    )
    result.stdout.no_fnmatch_line("*During handling*")


FAULT_TESTS = """
import openai
import pytest

def test_the_scenario_is_faulted(mockllama, mockllama_journal):
    client = openai.OpenAI(base_url=mockllama.base_url("spec"), api_key="unused", max_retries=0)
    events = [e.type for e in client.responses.create(model="text-finishes", input="x", stream=True)]
    assert len(events) == 2 and "response.completed" not in events
    assert mockllama_journal.last.fault == "truncate-stream=2" and mockllama_journal.last.finished is False

def test_other_scenarios_are_not(mockllama):
    client = openai.OpenAI(base_url=mockllama.base_url("spec"), api_key="unused", max_retries=0)
    events = [e.type for e in client.responses.create(model="text-cut-8", input="x", stream=True)]
    assert events[-1] == "response.incomplete"
"""


def test_fault_option_applies_per_scenario(pytester):
    pytester.makepyfile(test_inner=FAULT_TESTS)
    result = pytester.runpytest_subprocess(
        "--mockllama-fault", "text-finishes", "truncate-stream=2", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2)


def test_fault_ini_option_applies_per_scenario_and_a_bad_one_fails(pytester):
    pytester.makepyfile(test_inner=FAULT_TESTS)
    pytester.makeini("[pytest]\nmockllama_faults =\n    text-finishes truncate-stream=2\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)
    pytester.makeini("[pytest]\nmockllama_faults =\n    text-finishes status=418\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    result.stdout.re_match_lines([r".*mockllama: no recording of llama-server answering HTTP 418.*"])


# --- the options of `serve`, offered from their one declaration ------------------------------------


def test_every_option_offered_is_a_command_line_option_and_an_ini_key(pytester):
    from mockllama.pytest_plugin.session import plugin_options

    shown = pytester.runpytest_subprocess("--help", "-p", "no:cacheprovider").stdout.str()
    offered = plugin_options()
    assert {"upstream_timeout", "max_reply_bytes", "pace", "behaviour"} <= {declared.name for declared in offered}
    for declared in offered:
        assert declared.plugin_flag in shown and f"\n  {declared.ini} " in shown, declared.name
    for declared in set(options_of(ServeOptions)) - set(offered):
        assert declared.not_in_plugin and declared.plugin_flag not in shown, declared.name


CHECKED = "def test_x(mockllama):\n    pass\n"


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--pace", "fast"),
        ("--journal-size", "-1"),
        ("--upstream", "ftp://example.test"),
        ("--record-mode", "sometimes"),
    ],
)
def test_serve_and_the_plugin_refuse_a_bad_value_with_the_same_reason(pytester, flag, value):
    from click.testing import CliRunner

    from mockllama.cli import main

    declared = next(declared for declared in options_of(ServeOptions) if declared.flag == flag)
    with pytest.raises(ValueError) as told:
        declared.parse(value)
    reason = str(told.value)
    served = CliRunner().invoke(main, ["serve", flag, value])
    assert served.exit_code == 2 and reason in " ".join(served.output.split())
    pytester.makepyfile(test_inner=CHECKED)
    result = pytester.runpytest_subprocess(f"--mockllama-{flag[2:]}", value, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert f"mockllama: {reason} (--mockllama-{flag[2:]})" in result.stdout.str()


def test_a_recording_option_without_an_upstream_names_the_plugins_upstream_option(pytester):
    pytester.makepyfile(test_inner=CHECKED)
    pytester.makeini("[pytest]\nmockllama_max_reply_bytes = 1000\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*mockllama: limits the replies of a live llama-server: it needs --mockllama-upstream URL or the ini "
            "key mockllama_upstream (the ini key mockllama_max_reply_bytes)*"
        ]
    )


DEFAULT_BEHAVIOUR_TEST = """
import json, urllib.request

def test_unprefixed_requests_get_the_default_behaviour(mockllama):
    request = urllib.request.Request(mockllama.url + "/v1/responses", data=json.dumps(
        {"model": "text-cut-8", "input": "x"}).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as reply:
        assert reply.headers["X-Mockllama-Behaviour"] == EXPECTED
"""


@pytest.mark.parametrize(("option", "expected"), [([], "spec"), (["--mockllama-behaviour", "fixed"], "fixed")])
def test_the_command_line_beats_the_ini_file(pytester, option, expected):
    pytester.makeini("[pytest]\nmockllama_behaviour = spec\n")
    pytester.makepyfile(test_inner=DEFAULT_BEHAVIOUR_TEST.replace("EXPECTED", repr(expected)))
    pytester.runpytest_subprocess(*option, "-p", "no:cacheprovider").assert_outcomes(passed=1)
