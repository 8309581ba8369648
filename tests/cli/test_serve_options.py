"""`serve`'s options, made from one declaration (``ServeOptions``): none that `serve` had is lost,
every declared one is offered with its help, and a bad value is refused with the option's own reason."""

from __future__ import annotations

import re
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from mockllama.app import ServeOptions
from mockllama.cli import main
from mockllama.commands.serve import serve
from mockllama.server.option_fields import OptionError, options_of
from support.recordings import catalogued_names

# `serve`'s options when they came to be declared once (issue 44), with their defaults as --help
# showed them: none may go, nor change its default. New ones may come.
DEFAULTS_AT_ISSUE_44 = {
    "--host": "127.0.0.1",
    "--port": "18090",
    "--behaviour": "buggy",
    "--cassettes": None,
    "--recordings": "stock",
    "--fallback": None,
    "--setup": None,
    "--max-body-bytes": "1048576",
    "--body-timeout": "60.0",
    "--pace": "instant",
    "--journal-size": "1000",
    "--fault": None,
    "--cors-origin": None,
    "--access-log": None,
    "--allowed-host": None,
    "--upstream": None,
    "--record-to": None,
    "--record-mode": None,
    "--upstream-timeout": "300.0",
    "--max-reply-bytes": None,
}
# The choices each offered then; the behaviours may grow (a registered behaviour joins them).
CHOICES_AT_ISSUE_44 = {
    "--behaviour": ["buggy", "fixed", "spec"],
    "--recordings": ["stock", "patched"],
    "--record-mode": ["none", "new", "new_episodes", "all"],
}


@pytest.fixture(scope="module")
def help_text() -> str:
    """`serve --help`, its whitespace folded, so that a wrapped line reads as one."""
    result = CliRunner().invoke(main, ["serve", "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _option(flag: str):
    return next(param for param in serve.params if flag in param.opts)


@pytest.mark.parametrize("flag", DEFAULTS_AT_ISSUE_44)
def test_every_option_serve_had_is_still_there_with_its_default(flag, help_text):
    option = _option(flag)
    default = DEFAULTS_AT_ISSUE_44[flag]
    if default is None:
        assert option.get_default(click.Context(serve)) in (None, (), False) and not option.show_default
    else:
        assert str(option.default) == default and f"[default: {default}]" in help_text


@pytest.mark.parametrize("flag", CHOICES_AT_ISSUE_44)
def test_every_choice_serve_offered_is_still_listed_and_taken(flag, help_text):
    listed = re.search(re.escape(flag) + r" \[([^\]]+)\]", help_text).group(1).split("|")
    for choice in CHOICES_AT_ISSUE_44[flag]:
        assert choice in listed
        assert _option(flag).type.convert(choice, _option(flag), None) is not None


@pytest.mark.parametrize("declared", options_of(ServeOptions), ids=lambda declared: declared.flag)
def test_every_declared_option_is_in_serve_help_with_its_help(declared, help_text):
    assert _option(declared.flag).name == declared.name
    assert "".join(declared.help.split()) in "".join(help_text.split())  # click may wrap at a hyphen


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--journal-size", "lots"], "'lots' is not a whole number >= 0"),
        (["--port", "65536"], "'65536' is not a whole number from 0 to 65535"),
        (["--pace", "fast"], "pace must be instant, recorded or a number from 0.001 up, not 'fast'"),
        (["--pace", "1e-300"], "pace must be instant, recorded or a number from 0.001 up, not '1e-300'"),
        (["--behaviour", "honest"], "unknown behaviour 'honest'; use one of: buggy, fixed, spec"),
        (["--cors-origin", "localhost:5173"], "'localhost:5173' is not an origin"),
        (["--upstream-timeout", "0"], "'0' is not a number of seconds >= 0.1"),
    ],
)
def test_a_bad_value_is_refused_with_the_reason_its_declaration_gives(args, reason):
    declared = next(declared for declared in options_of(ServeOptions) if declared.flag == args[0])
    with pytest.raises(ValueError) as told:
        declared.parse(args[1])
    assert reason in str(told.value)
    result = CliRunner().invoke(main, ["serve", *args])
    assert result.exit_code == 2
    assert f"Invalid value for '{args[0]}': {told.value}" in " ".join(result.output.split())


@pytest.mark.parametrize("args", [["--record-mode", "new"], ["--record-mode", "all"], ["--max-reply-bytes", "1000"]])
def test_a_recording_option_without_an_upstream_is_refused_and_names_it(args):
    result = CliRunner().invoke(main, ["serve", *args])
    assert result.exit_code == 2
    assert f"Invalid value for '{args[0]}'" in result.output and "it needs --upstream URL" in result.output


def test_the_same_check_refuses_the_options_made_in_code():
    with pytest.raises(OptionError) as refused:
        ServeOptions(record_mode="new")
    assert refused.value.field == "record_mode" and refused.value.needs == "upstream"
    assert ServeOptions(record_mode="none").record_mode.value == "none"  # replay only: nothing to record


def test_a_journal_body_cap_past_the_journals_bytes_is_refused_and_names_both():
    result = CliRunner().invoke(main, ["serve", "--journal-body-bytes", "300", "--journal-bytes", "200"])
    assert result.exit_code == 2
    assert "Invalid value for '--journal-body-bytes'" in result.output and "raise --journal-bytes N" in result.output
    with pytest.raises(OptionError) as refused:
        ServeOptions(journal_body_bytes=300, journal_bytes=200)
    assert refused.value.field == "journal_body_bytes" and refused.value.needs == "journal_bytes"
    assert ServeOptions(journal_body_bytes=200, journal_bytes=200).journal_bytes == 200


def test_a_fault_for_a_scenario_not_loaded_is_refused_as_the_faults_option():
    result = CliRunner().invoke(main, ["serve", "--fault", "no-such-scenario", "disconnect=1"])
    assert result.exit_code == 2
    assert "Invalid value for '--fault': no loaded scenario is named 'no-such-scenario'" in result.output


def test_the_record_directory_is_served_without_an_upstream_too(tmp_path):
    """--record-to DIR is served once it holds a cassette, with or without --upstream, as the pytest
    plugin serves its record directory; so the same options run offline after recording."""
    from support.recordings import SCENARIOS

    recorded = tmp_path / "recorded"
    recorded.mkdir()
    (recorded / "my-own.yaml").write_bytes(SCENARIOS["text-cut-8"].source.read_bytes())
    process = subprocess.Popen(
        [sys.executable, "-m", "mockllama", "serve", "--port", "0", "--record-to", str(recorded)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        process.stdout.readline()  # the URL
        counted = process.stdout.readline()
    finally:
        process.kill()
        process.communicate()
    assert f": {len(catalogued_names()) + 1} scenarios," in counted
