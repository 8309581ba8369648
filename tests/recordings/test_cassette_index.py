"""The cassette index: a directory loads from it as it would from the cassettes, and only while
they are as they were; it is never trusted from the cassette directory itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from mockllama.matching.matcher import Matcher
from mockllama.recordings import cassettes as cassettes_module
from mockllama.recordings import index as cassette_index
from mockllama.recordings import parallel
from mockllama.recordings.cassettes import CassetteError, bundled_cassette_dir, load_scenarios

FIELDS = (
    "scenario",
    "method",
    "path",
    "request_raw",
    "request_json",
    "status",
    "reason",
    "headers",
    "body",
    "turn",
    "match_keys",
)


@pytest.fixture
def index_dir(tmp_path, monkeypatch):
    where = tmp_path / "index"
    monkeypatch.setenv("MOCKLLAMA_INDEX_DIR", str(where))
    return where


@pytest.fixture
def cassettes(tmp_path):
    directory = tmp_path / "cassettes"
    directory.mkdir()
    for name in ("text-cut-8", "poem-finishes", "messages-cut-8"):
        shutil.copy(next(bundled_cassette_dir().rglob(f"{name}.yaml")), directory / f"{name}.yaml")
    return directory


@pytest.fixture
def read(monkeypatch) -> list[str]:
    """The names of the cassettes read (not taken from the index), as they are read."""
    names, real = [], cassettes_module.load_cassette

    def counted(path, *args, **kwargs):
        names.append(path.stem)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(cassettes_module, "load_cassette", counted)
    return names


def _as_values(scenarios) -> dict:
    return {
        name: [tuple(getattr(i, field) for field in FIELDS) for i in scenario.interactions]
        for name, scenario in scenarios.items()
    }


def test_a_directory_loads_from_its_index_as_from_its_cassettes(cassettes, index_dir, monkeypatch, read):
    first = load_scenarios([cassettes])
    assert sorted(read) == ["messages-cut-8", "poem-finishes", "text-cut-8"]
    assert len(list(index_dir.iterdir())) == 1
    again = load_scenarios([cassettes])
    assert len(read) == 3
    assert _as_values(again) == _as_values(first)
    monkeypatch.setenv("MOCKLLAMA_INDEX_DIR", "off")
    assert _as_values(load_scenarios([cassettes])) == _as_values(first)
    assert len(read) == 6


def test_a_first_load_holds_no_reply_body_in_memory_until_it_is_needed(cassettes, index_dir, monkeypatch):
    """The bodies go to the index file as each cassette is read (the peak memory of a first start at
    10,000 recordings), with or without an index kept."""
    for setting in (str(index_dir), "off"):
        monkeypatch.setenv("MOCKLLAMA_INDEX_DIR", setting)
        interactions = [i for s in load_scenarios([cassettes]).values() for i in s.interactions]
        assert not any("_body" in i.__dict__ for i in interactions)
        assert all(i.body.startswith((b"{", b"event:", b"data:")) for i in interactions)


def test_many_cassettes_are_read_in_worker_processes_as_in_this_one(cassettes, index_dir, monkeypatch):
    monkeypatch.setenv("MOCKLLAMA_INDEX_DIR", "off")
    in_process = _as_values(load_scenarios([cassettes]))
    monkeypatch.setattr(parallel, "PARALLEL_FROM", 1)
    monkeypatch.setattr(cassettes_module, "BATCH", 1)
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    assert _as_values(load_scenarios([cassettes])) == in_process
    (cassettes / "poem-finishes.yaml").write_text("interactions: [")  # the second file of three
    with pytest.raises(CassetteError, match="poem-finishes.yaml: not valid YAML") as raised:
        load_scenarios([cassettes])
    assert raised.value.path == cassettes / "poem-finishes.yaml"


def test_indexed_recordings_are_matched_as_read_ones(cassettes, index_dir):
    load_scenarios([cassettes])
    indexed = Matcher(load_scenarios([cassettes]))
    interaction = next(i for i in indexed.scenarios["text-cut-8"].interactions if i.path == "/v1/responses")
    raw = interaction.request_raw or __import__("json").dumps(interaction.request_json).encode()
    assert indexed.select("POST", "/v1/responses", raw).interaction is interaction


def test_a_changed_cassette_is_read_again_and_a_broken_one_still_stops_the_load(cassettes, index_dir, read):
    first = _as_values(load_scenarios([cassettes]))
    path = cassettes / "text-cut-8.yaml"
    path.write_text(path.read_text().replace("Count from 1 to 200", "Count from 1 to 300"))
    del read[:]
    reloaded = load_scenarios([cassettes])
    assert read == ["text-cut-8"]
    assert "Count from 1 to 300" in str(reloaded["text-cut-8"].interactions[0].request_json)
    assert _as_values({"poem-finishes": reloaded["poem-finishes"]}) == {"poem-finishes": first["poem-finishes"]}
    path.write_text("interactions: [")
    with pytest.raises(CassetteError, match="not valid YAML"):
        load_scenarios([cassettes])
    (cassettes / "added.yaml").write_text("")
    path.unlink()
    with pytest.raises(CassetteError, match="empty"):
        load_scenarios([cassettes])


def _same_size_edit(path) -> None:
    """Edit ``path`` to another request of the same size, and put its old mtime back, as ``tar``,
    ``rsync -t`` and ``cp -p`` do."""
    before = path.stat()
    text = path.read_text()
    assert "Count from 1 to 200" in text
    time.sleep(0.05)  # past the file system's coarse clock tick, as any real edit is
    path.write_text(text.replace("Count from 1 to 200", "Count from 1 to 300"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_same_size_edit_with_its_mtime_put_back_is_read_again(cassettes, index_dir, read):
    load_scenarios([cassettes])
    _same_size_edit(cassettes / "text-cut-8.yaml")
    del read[:]
    reloaded = load_scenarios([cassettes])
    assert read == ["text-cut-8"]  # its ctime moved: utime cannot set that back
    assert "Count from 1 to 300" in str(reloaded["text-cut-8"].interactions[0].request_json)


def test_a_file_replaced_by_another_of_the_same_size_and_mtime_is_read_again(cassettes, index_dir, read):
    """``rsync -t`` writes a new file, gives it the old mtime and renames it over the old one: the
    file the index vouched for is gone, and its replacement has another inode."""
    load_scenarios([cassettes])
    path = cassettes / "text-cut-8.yaml"
    before = path.stat()
    copy = cassettes / ".text-cut-8.yaml.rsync"
    copy.write_text(path.read_text().replace("Count from 1 to 200", "Count from 1 to 300"))
    os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(copy, path)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ino != before.st_ino
    del read[:]
    reloaded = load_scenarios([cassettes])
    assert read == ["text-cut-8"]
    assert "Count from 1 to 300" in str(reloaded["text-cut-8"].interactions[0].request_json)


def test_the_stamp_is_size_mtime_ctime_and_inode_as_in_gits_index(cassettes):
    status = (cassettes / "text-cut-8.yaml").stat()
    assert cassette_index.stamp(cassettes / "text-cut-8.yaml") == (
        status.st_size,
        status.st_mtime_ns,
        status.st_ctime_ns,
        status.st_ino,
    )


def test_an_index_written_in_many_chunks_loads_as_the_cassettes(cassettes, index_dir, monkeypatch, read):
    """The entries are written a chunk at a time among the bodies (index.CHUNK files each)."""
    first = _as_values(load_scenarios([cassettes]))
    monkeypatch.setattr(cassette_index, "CHUNK", 1)
    os.utime(cassettes / "text-cut-8.yaml", ns=(10**9, 10**9))  # read again, the whole index written anew
    assert _as_values(load_scenarios([cassettes])) == first
    del read[:]
    assert _as_values(load_scenarios([cassettes])) == first
    assert read == []


def test_an_index_that_cannot_be_read_is_rebuilt(cassettes, index_dir):
    expected = _as_values(load_scenarios([cassettes]))
    (index_file,) = index_dir.iterdir()
    index_file.write_bytes(index_file.read_bytes()[:100])
    assert _as_values(load_scenarios([cassettes])) == expected
    assert _as_values(load_scenarios([cassettes])) == expected
    assert index_file.stat().st_size > 100


def test_nothing_is_written_beside_the_cassettes_and_off_writes_nothing(cassettes, tmp_path, monkeypatch):
    before = sorted(os.listdir(cassettes))
    monkeypatch.setenv("MOCKLLAMA_INDEX_DIR", "off")
    load_scenarios([cassettes])
    assert cassette_index.index_path(cassettes) is None
    monkeypatch.delenv("MOCKLLAMA_INDEX_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    load_scenarios([cassettes])
    assert sorted(os.listdir(cassettes)) == before
    assert [p.parent for p in (tmp_path / "cache").rglob("*.index")] == [tmp_path / "cache" / "mockllama" / "index"]


def test_serve_and_scenarios_read_the_index_the_same(cassettes, index_dir):
    command = [sys.executable, "-m", "mockllama", "scenarios", "--json", "--cassettes", str(cassettes)]
    first = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert len(list(index_dir.iterdir())) == 1
    assert subprocess.run(command, capture_output=True, text=True, check=True).stdout == first


def test_what_serve_loads_is_frozen_only_when_the_load_succeeds():
    """``collection_paused(keep=True)`` moves what it made out of the collector's sight; a failed load
    made garbage, which must stay collectable (a CliRunner in a test process would otherwise keep it)."""
    import gc

    from mockllama.recordings.cassettes import collection_paused

    frozen = gc.get_freeze_count()
    try:
        with pytest.raises(ValueError), collection_paused(keep=True):
            made = [[n] for n in range(1000)]
            raise ValueError("a broken cassette")
        assert gc.isenabled() and gc.get_freeze_count() == frozen
        with collection_paused(keep=True):
            made = [[n] for n in range(1000)]
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + len(made)
    finally:
        gc.unfreeze()
