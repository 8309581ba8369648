"""The plugin's options, run in a separate pytest as a client author would run it."""

from __future__ import annotations

import shutil

import pytest

from mockllama.cassettes import bundled_cassette_dir

pytest_plugins = ["pytester"]

INNER_TEST = '''
import openai

def test_extra_scenario_is_served(mockllama):
    assert "my-extra" in mockllama.scenarios and "text-cut-8" in mockllama.scenarios
    client = openai.OpenAI(base_url=mockllama.base_url("fixed"), api_key="unused")
    assert client.responses.create(model="my-extra", input="anything").status == "incomplete"

def test_base_url_param(mockllama_base_url):
    assert mockllama_base_url.endswith("/v1")
'''


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
    result.assert_outcomes(passed=4)


def test_ini_option_adds_a_cassette_directory(pytester, extra_dir):
    pytester.makeini("[pytest]\nmockllama_cassettes =\n    my-cassettes\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_without_the_option_the_extra_scenario_is_missing(pytester, extra_dir):
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)


def test_a_corrupt_extra_directory_fails_with_the_file_and_reason(pytester):
    broken = pytester.path / "broken"
    broken.mkdir()
    (broken / "bad.yaml").write_text("interactions: [")
    pytester.makepyfile(test_inner="def test_x(mockllama):\n    pass\n")
    result = pytester.runpytest_subprocess("--mockllama-cassettes", str(broken), "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.re_match_lines([r".*mockllama: cannot load cassette .*bad\.yaml: not valid YAML.*"])
    result.stdout.no_fnmatch_line("*Traceback*")
