"""Instructions and simulated cache misses per request at saturation: ``python -m benchmarks
--cache-misses``.

At 64 connections the journal costs mockllama far more of its req/s than of its instructions
(docs/performance.md, "The journal at saturation"). What grows is memory traffic: each request
keeps a few objects for the last ``--journal-size`` requests, so each one writes to memory and
frees memory that has left the core's caches, and a miss there costs far more than an instruction.
A shared VM's timings cannot resolve that reliably, and this machine exposes no hardware counters,
so valgrind's callgrind simulates the caches instead: a first level as this machine's level-1 data
cache and a last level as its per-core level-2 cache (read from /sys; what a miss past it costs,
the level-3 cache or memory, shared with whatever else runs there, is what varies). The counts
repeat within a percent or two from run to run, whatever else the machine does.

Each contender (the floor, mockllama ``buggy`` with the journal on, and off) starts under callgrind
on the server's core with counting off, is warmed up on one connection, then counted over
``seconds`` of wrk (on the other core) at ``connections`` connections: the event loop then serves
many requests a turn, as at saturation.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from benchmarks.harness import SERVER_CPU, TEXT, Contender, request_body, requests_served
from benchmarks.instructions import callgrind_totals

# Requests answered before counting starts: more than the journal's 1,000 entries, so that the ring
# is full and each counted request also lets the oldest entry go, as in a long run.
WARM_UP = 1500
# The cache levels callgrind simulates: its first level and its last.
L1_DATA, L2 = (1, "Data"), (2, "Unified")
CPU_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


def cache_geometry(caches: Path = CPU_CACHES) -> dict[tuple[int, str], tuple[int, int, int]]:
    """(size in bytes, ways, line bytes) of each cache level of CPU 0, by (level, type)."""
    found = {}
    for index in sorted(caches.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _bytes((index / "size").read_text().strip())
            ways = int((index / "ways_of_associativity").read_text())
            line = int((index / "coherency_line_size").read_text())
        except (OSError, ValueError):
            continue  # a level the kernel describes only in part: not simulated
        found[(level, kind)] = (size, ways, line)
    return found


def _bytes(text: str) -> int:
    found = re.fullmatch(r"(\d+)([KMG]?)", text)
    if found is None:
        raise ValueError(f"not a cache size: {text!r}")
    value, unit = found.groups()
    return int(value) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[unit]


def simulated(geometry: dict[tuple[int, str], tuple[int, int, int]]) -> tuple[list[str], str]:
    """callgrind's options for the caches it can simulate as this machine has them, and the words
    that name them in the table. valgrind needs a power of two sets per cache; a level it cannot
    take as described is left to valgrind's own choice, and the table says so."""
    options, names = [], []
    for option, key, name in (("--D1", L1_DATA, "L1d"), ("--LL", L2, "L2")):
        if key not in geometry:
            names.append(f"{name} as valgrind picks it (this machine does not describe its own)")
            continue
        size, ways, line = geometry[key]
        sets = size // (ways * line) if ways and line else 0
        if sets <= 0 or sets & (sets - 1):
            names.append(f"{name} as valgrind picks it ({size:,} B in {ways} ways is not a power of two sets)")
            continue
        options.append(f"{option}={size},{ways},{line}")
        names.append(f"{name} {size // 1024:,} KiB, {ways}-way")
    return options, "; ".join(names)


def per_request(totals: dict[str, int], requests: int) -> tuple[int, int, int]:
    """(instructions, first-level data misses, last-level misses) per request from callgrind's totals."""
    first = totals["D1mr"] + totals["D1mw"]
    last = totals["DLmr"] + totals["DLmw"] + totals["ILmr"]
    return totals["Ir"] // requests, first // requests, last // requests


def run_cache_misses(entries: list[Contender], connections: int, seconds: int) -> str:
    """The table: each contender's counts per request, and each against the first (the floor)."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("python -m benchmarks --cache-misses needs valgrind: apt-get install valgrind")
    if shutil.which("wrk") is None:
        sys.exit("python -m benchmarks --cache-misses needs wrk: apt-get install wrk")
    body = request_body(*TEXT)
    options, caches = simulated(cache_geometry())
    counts = {}
    for contender in entries:

        def load(contender: Contender = contender) -> int:
            return requests_served(contender.url, body, connections, seconds)

        totals, requests = callgrind_totals(contender, body, ["--cache-sim=yes", *options], load, WARM_UP, SERVER_CPU)
        counts[contender.name] = per_request(totals, requests)
        print(f"counted {contender.name}: {requests:,} requests", file=sys.stderr, flush=True)
    base = counts[entries[0].name]
    lines = [
        f"text-cut-8 at {connections} connections for {seconds} s; caches simulated: {caches}",
        "",
        "| contender | instructions per request | L1d misses per request | L2 misses per request "
        "| instructions vs floor | L2 misses vs floor |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, (instructions, first, last) in counts.items():
        lines.append(
            f"| {name} | {instructions:,} | {first:,} | {last:,} "
            f"| {instructions / base[0]:.2f}x | {last / max(base[2], 1):.2f}x |"
        )
    return "\n".join(lines)
