"""`mockllama record` of a sweep, against a test double of llama-server: mockllama itself serving
the bundled real recordings (the sweep's request as written answers tool-finishes, 37 tokens, and
each position answers the bundled tool-call@N), so what is recorded can be compared byte for byte."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from mockllama.app import create_app
from mockllama.cli import main
from mockllama.matching.pipeline import match_keys
from mockllama.recordings.cassettes import RECORDING_SETS, load_directory, load_scenarios
from mockllama.recordings.catalogue import load_catalogue
from mockllama.recordings.record import RecordError
from mockllama.recordings.record_sweep import record_sweep, working_folder
from mockllama.server.background import BackgroundServer
from mockllama.server.journal import JOURNAL

BUNDLED = load_scenarios([RECORDING_SETS["stock"]()], keys_of=match_keys)
(TOOL_CALL,) = [entry for entry in load_catalogue("sweeps") if entry.name == "tool-call"]


@pytest.fixture(scope="module")
def double():
    """A llama-server double: mockllama replaying the bundled recordings, sweeps included."""
    with BackgroundServer(create_app(BUNDLED)) as running:
        yield running


def bodies(directory, name: str) -> dict[tuple, bytes]:
    (scenarios) = [s for s in load_directory(directory) if s.sweep == name]
    return {(s.name, i.path, i.stream): i.body for s in scenarios for i in s.interactions}


def test_a_sweep_is_recorded_at_every_position_up_to_where_the_server_says_it_finishes(double, tmp_path):
    result = CliRunner().invoke(
        main,
        ["record", "--server", double.url, "--out", str(tmp_path), "--catalogue", "sweeps", "--scenario", "tool-call"],
    )
    assert result.exit_code == 0, result.output
    assert "37/37 positions" in result.output and "37 positions recorded in" in result.output
    assert (tmp_path / "tool-call.sweep.yaml").is_file()
    assert not working_folder(tmp_path, "tool-call").exists()
    bundled = [s for s in BUNDLED.values() if s.sweep == "tool-call"]
    expected = {(s.name, i.path, i.stream): i.body for s in bundled for i in s.interactions}
    assert bodies(tmp_path, "tool-call") == expected  # the double replays the bundled bytes
    provenance = json.loads((tmp_path / "provenance.json").read_text())
    assert provenance["scenarios"]["tool-call"] == "positions 1-37: length x36, tool_calls x1"


def test_a_stopped_sweep_goes_on_where_it_stopped(double, tmp_path):
    class Stop(Exception):
        pass

    def stop_at_ten(done, total, said, recorded):
        if done == 10:
            raise Stop

    with pytest.raises(Stop):
        asyncio.run(record_sweep(TOOL_CALL, double.url, tmp_path, 30, {}, progress=stop_at_ten))
    assert not (tmp_path / "tool-call.sweep.yaml").exists()
    assert len(list(working_folder(tmp_path, "tool-call").glob("*.position"))) == 10

    journal = double.app[JOURNAL]
    before = journal.last_id
    outcome = asyncio.run(record_sweep(TOOL_CALL, double.url, tmp_path, 30, {}))
    asked = journal.entries(since=before)
    assert (outcome.positions, outcome.recorded) == (37, 27)
    assert len(asked) == 1 + 27 * 4  # the length asked again, then only the positions not on disk
    assert bodies(tmp_path, "tool-call") == {
        (s.name, i.path, i.stream): i.body for s in BUNDLED.values() if s.sweep == "tool-call" for i in s.interactions
    }


def test_a_working_folder_for_another_request_is_not_resumed(double, tmp_path):
    folder = working_folder(tmp_path, "tool-call")
    folder.mkdir()
    (folder / "sweep.json").write_text('{"request_sha256": "another", "finished_at": 37}')
    (folder / "1.position").write_text("not a cassette")
    (folder / "1.summary").write_text("responses=completed twin=length")
    outcome = asyncio.run(record_sweep(TOOL_CALL, double.url, tmp_path, 30, {}))
    assert outcome.recorded == 37


def test_a_request_that_fails_as_written_has_no_length_to_sweep_to(double, tmp_path):
    (entry,) = [e for e in load_catalogue("sweeps") if e.name == "text-reply"]
    unknown = type(entry)(
        entry.name, responses={**entry.responses, "input": "No recording has this."}, sweep=entry.sweep
    )
    with pytest.raises(RecordError, match="answered HTTP 404, so there is no length to sweep up to"):
        asyncio.run(record_sweep(unknown, double.url, tmp_path, 30, {}))
