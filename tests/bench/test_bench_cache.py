"""What ``python -m benchmarks --cache-misses`` tells callgrind to simulate (benchmarks.cache_misses):
this machine's caches as /sys describes them, or valgrind's own pick, said in the table, where
valgrind could not take them."""

from __future__ import annotations

from pathlib import Path

from benchmarks.cache_misses import cache_geometry, per_request, simulated


def _cache(root: Path, index: int, level: int, kind: str, size: str, ways: int, line: int = 64) -> None:
    folder = root / f"index{index}"
    folder.mkdir(parents=True)
    for name, value in (
        ("level", level),
        ("type", kind),
        ("size", size),
        ("ways_of_associativity", ways),
        ("coherency_line_size", line),
    ):
        (folder / name).write_text(f"{value}\n")


def test_the_machine_s_l1d_and_l2_are_simulated_as_sys_describes_them(tmp_path):
    _cache(tmp_path, 0, 1, "Data", "48K", 12)
    _cache(tmp_path, 1, 1, "Instruction", "32K", 8)
    _cache(tmp_path, 2, 2, "Unified", "1024K", 16)
    _cache(tmp_path, 3, 3, "Unified", "32768K", 16)
    geometry = cache_geometry(tmp_path)
    assert geometry[(1, "Data")] == (48 * 1024, 12, 64) and geometry[(3, "Unified")] == (32 * 1024**2, 16, 64)
    options, names = simulated(geometry)
    assert options == ["--D1=49152,12,64", "--LL=1048576,16,64"]
    assert names == "L1d 48 KiB, 12-way; L2 1,024 KiB, 16-way"


def test_a_level_valgrind_cannot_take_is_left_to_it_and_the_table_says_so(tmp_path):
    _cache(tmp_path, 0, 1, "Data", "48K", 12)
    _cache(tmp_path, 2, 2, "Unified", "1536K", 16)  # 1,536 sets
    options, names = simulated(cache_geometry(tmp_path))
    assert options == ["--D1=49152,12,64"]
    assert names.endswith("L2 as valgrind picks it (1,572,864 B in 16 ways is not a power of two sets)")
    options, names = simulated({})
    assert options == [] and names.count("as valgrind picks it (this machine does not describe its own)") == 2


def test_a_cache_level_described_in_part_is_not_simulated(tmp_path):
    _cache(tmp_path, 0, 1, "Data", "48K", 12)
    (tmp_path / "index0" / "ways_of_associativity").unlink()
    _cache(tmp_path, 2, 2, "Unified", "1 MiB", 16)  # a size in a form the kernel does not write
    assert cache_geometry(tmp_path) == {}


def test_misses_per_request_add_reads_and_writes_and_the_last_level_s_instruction_misses():
    totals = {"Ir": 2_000_000, "D1mr": 3000, "D1mw": 1000, "DLmr": 100, "DLmw": 60, "ILmr": 40}
    assert per_request(totals, 1000) == (2000, 4, 0)
    assert per_request(totals, 10) == (200_000, 400, 20)
