"""Benchmark: mockllama against the floor (a bare aiohttp application) and aiohttp's low-level
server sending the same bytes, the mock servers a user would pick instead (aimock, mock-llm: see
benchmarks.peers) and, optionally, llama-server.

    python -m benchmarks [--duration 3] [--rounds 3] [--llama-server URL] [--with-scale]
    python -m benchmarks --scale        # how costs grow with the number of recordings
    python -m benchmarks --install-peers
    python -m benchmarks --instructions # instructions per request under callgrind: steady on a busy VM
    python -m benchmarks --cache-misses # ... and simulated cache misses at 64 connections, journal on and off

Every contender runs in its own process, pinned to CPU 0; the load generator is ``wrk``
(Debian's package), pinned to CPU 1, so the two do not fight for a core. Workloads: non-streaming
``text-cut-8`` and streamed ``poem-finishes`` (wrk reads each whole stream), at 1 and 64
connections. Figures: p50 and p99 latency, requests per second, time from process start to the
first 200, and peak RSS (VmHWM). Ratios are against the floor and against llama-server, and
mockllama's against each peer's; the fidelity table says what a client sees of each peer's replies.

A shared VM is noisy, so the contenders take turns: each round loads each of them in turn, and
the table gives the median of the rounds (and of three start-ups). Each ratio of req/s to the
floor, to a peer, or of ``fixed`` and ``spec`` to ``buggy`` is given twice: of those medians, and
paired, the median of the rounds' own ratios, each round's run held against the other
contender's run of the same round, seconds apart (llama-server, measured in one long round after
the others, has no paired ratio). The VM's speed drifts over a run, and a paired ratio leaves out
what the drift does between rounds.
The table of ``fixed`` and ``spec`` against ``buggy`` also lists each round's own paired ratio:
their spread is what the VM does, as the three run the same code but for the body's rewrite.

Then the target, workload by workload (``target_table``): mockllama's paired ratio to each peer
divided by the floor's own (the ratio of ratios, at least OF_FLOORS_RATIO), and on the JSON
workload mockllama against the floor itself (at least JSON_OF_FLOOR); and, last, start-up beside
aimock's (benchmarks.startup), in rounds of their own after the rest, and what the ``mockllama``
fixture adds to a pytest session of one test, paired.

``--journal-cost`` measures only mockllama ``buggy`` with the journal on against off: req/s,
server CPU per request (from /proc), and journalling's own time per request, in process, as a
share of that CPU time (the steadiest of the three on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from benchmarks.cache_misses import run_cache_misses
from benchmarks.harness import (
    FLOOR,
    LOW_LEVEL,
    WORKLOADS,
    Contender,
    compile_bytecode,
    contenders,
    cpu_per_request,
    floor_command,
    free_port,
    mockllama_command,
    peak_rss_mb,
    request_body,
    run_wrk,
    start_contender,
)
from benchmarks.instructions import run_instructions
from benchmarks.peers import AIMOCK, PEERS, fidelity_row, fidelity_table, install_peers, peer_contender
from benchmarks.scale import parse_sizes, run_scale
from benchmarks.startup import fixture_verdict, measure_startup, startup_table, startup_verdict

CONCURRENCY = (1, 64)


# --- measuring ----------------------------------------------------------------------------------


@dataclass
class Result:
    contender: str
    workload: str
    connections: int
    rps: float
    p50_ms: float
    p99_ms: float
    rounds_rps: tuple[float, ...] = ()  # each round's req/s, in order, for paired ratios


def round_ratios(mine: Result, base: Result) -> list[float] | None:
    """Each round's req/s of mine over base's in the same round; None when the two did not run the
    same rounds (``--llama-server`` runs one long round of its own)."""
    if not mine.rounds_rps or len(mine.rounds_rps) != len(base.rounds_rps):
        return None
    return [m / b for m, b in zip(mine.rounds_rps, base.rounds_rps)]


def paired_ratio(mine: Result, base: Result) -> float | None:
    """The median of ``round_ratios``: what the VM's drift between rounds does not move."""
    ratios = round_ratios(mine, base)
    return None if ratios is None else statistics.median(ratios)


def _paired(mine: Result, base: Result | None) -> str:
    ratio = None if base is None else paired_ratio(mine, base)
    return "-" if ratio is None else f"{ratio:.2f}x"


def _each_round(mine: Result, base: Result | None) -> str:
    """Each round's own ratio, in order: the spread a paired ratio is the median of."""
    rounds = None if base is None else round_ratios(mine, base)
    return "-" if rounds is None else ", ".join(f"{ratio:.2f}x" for ratio in rounds)


@dataclass(frozen=True)
class Target:
    url: str
    duration: int  # seconds per wrk run
    rounds: int
    settle: bool = False  # wait for llama-server's slots to go idle before each run
    workloads: tuple[tuple[str, bool], ...] = WORKLOADS  # what it can answer (a peer may not stream)


def wait_until_idle(url: str, seconds: float = 300) -> None:
    """llama-server keeps generating for requests wrk has given up on; let it finish first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/slots", timeout=5) as response:
                if not any(slot.get("is_processing") for slot in json.load(response)):
                    return
        except (OSError, ValueError):
            return  # no /slots endpoint: nothing to wait for
        time.sleep(0.5)


def measure(targets: dict[str, Target]) -> list[Result]:
    """Every workload on every target, the targets taking turns; medians over the rounds."""
    results = []
    for scenario, stream in WORKLOADS:
        body = request_body(scenario, stream)
        label = f"{scenario} {'stream' if stream else 'json'}"
        for connections in CONCURRENCY:
            runs = {name: [] for name in targets}
            for round_number in range(max(target.rounds for target in targets.values())):
                for name, target in targets.items():
                    if round_number < target.rounds and (scenario, stream) in target.workloads:
                        if target.settle:
                            wait_until_idle(target.url)
                        runs[name].append(run_wrk(target.url, body, connections, target.duration))
            for name, samples in runs.items():
                if not samples:
                    continue
                rps, p50, p99 = (statistics.median(column) for column in zip(*samples))
                results.append(Result(name, label, connections, rps, p50, p99, tuple(sample[0] for sample in samples)))
            print(f"measured {label} at {connections} connections", file=sys.stderr, flush=True)
    return results


# --- the run and the table ----------------------------------------------------------------------


JOURNAL_ON, JOURNAL_OFF = "mockllama buggy, journal on", "mockllama buggy, journal off"


def journal_contenders(port_for) -> list[Contender]:
    """The journal's cost: the same server with the journal on (the default) and off."""
    on, off = port_for(), port_for()
    return [
        Contender(JOURNAL_ON, mockllama_command(on), on),
        Contender(JOURNAL_OFF, mockllama_command(off, "--journal-size", "0"), off),
    ]


def journal_cpu_cost(targets: dict[str, tuple[str, int]], duration: int, rounds: int) -> str:
    """Journal on against off, in turns round by round: median server CPU per request, per workload."""
    lines = [
        "| workload | conns | journal on CPU us/req | journal off CPU us/req | cost |",
        "| --- | --- | --- | --- | --- |",
    ]
    for scenario, stream in WORKLOADS:
        body = request_body(scenario, stream)
        for connections in CONCURRENCY:
            runs = {name: [] for name in targets}
            for _ in range(rounds):
                for name, (url, pid) in targets.items():
                    runs[name].append(cpu_per_request(url, pid, body, connections, duration))
            on, off = statistics.median(runs[JOURNAL_ON]), statistics.median(runs[JOURNAL_OFF])
            lines.append(
                f"| {scenario} {'stream' if stream else 'json'} | {connections} | {on:.1f} | {off:.1f} | "
                f"{(on / off - 1) * 100:+.1f}% |"
            )
            print(f"measured CPU per request, {scenario} at {connections} connections", file=sys.stderr, flush=True)
    return "\n".join(lines)


def journalling_microseconds(requests: int = 20000, rounds: int = 5) -> tuple[float, float]:
    """In process, no network: the server's wrapper (``answers_errors``, given a journal) around a
    handler that returns a reply like a replay's (its headers, a 1 KB body), with the journal on
    (the default size) and off.
    (on, off) medians in microseconds per request. Other work on a shared machine slows both
    alike, so their difference says what journalling adds far more steadily than wrk's req/s."""
    import asyncio

    from aiohttp import web
    from aiohttp.test_utils import make_mocked_request

    from mockllama.server.app import answers_errors
    from mockllama.server.journal import DEFAULT_JOURNAL_SIZE, Journal

    headers = {
        "Content-Type": "application/json",
        "X-Mockllama-Behaviour": "buggy",
        "X-Mockllama-Scenario": "text-cut-8",
        "X-Mockllama-Selected-By": "match",
    }

    async def reply(request: web.Request) -> web.Response:
        return web.Response(body=b"x" * 1024, headers=headers)

    async def per_request(size: int) -> float:
        app = web.Application()
        handler = answers_errors(reply, Journal(size))
        pool = [make_mocked_request("POST", "/buggy/v1/responses", app=app) for _ in range(64)]
        started = time.perf_counter()
        for number in range(requests):
            await handler(pool[number % len(pool)])
        return (time.perf_counter() - started) / requests * 1e6

    async def both() -> tuple[list[float], list[float]]:
        on, off = [], []
        for _ in range(rounds):  # in turns, as the servers are measured
            off.append(await per_request(0))
            on.append(await per_request(DEFAULT_JOURNAL_SIZE))
        return on, off

    on, off = asyncio.run(both())
    return statistics.median(on), statistics.median(off)


def journalling_share(on_us: float, off_us: float, cpu_table: str) -> str:
    """Journalling's own time per request against the server's whole CPU time per request
    (journal off, text-cut-8 at 1 connection: the cheapest request, so the largest share)."""
    row = next(line for line in cpu_table.splitlines() if line.startswith("| text-cut-8 json | 1 |"))
    server_us = float(row.split("|")[4])
    return (
        f"journalling itself (in process, journal on against off): {on_us - off_us:.1f} us per request "
        f"({on_us:.1f} against {off_us:.1f}); the server spends {server_us:.1f} us of CPU per text-cut-8 "
        f"request with the journal off, so journalling costs {(on_us - off_us) / server_us * 100:.1f}% of it"
    )


def journal_cost(results: list[Result]) -> str:
    """Per workload: the throughput lost to journalling, as a share of the throughput without it."""
    by_key = {(r.contender, r.workload, r.connections): r for r in results}
    lines = ["| workload | conns | journal on req/s | journal off req/s | cost |", "| --- | --- | --- | --- | --- |"]
    for r in results:
        if r.contender != JOURNAL_ON:
            continue
        off = by_key[(JOURNAL_OFF, r.workload, r.connections)]
        lines.append(
            f"| {r.workload} | {r.connections} | {r.rps:,.0f} | {off.rps:,.0f} | {(1 - r.rps / off.rps) * 100:+.1f}% |"
        )
    return "\n".join(lines)


def machine() -> str:
    model = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        model = found.group(1).strip() if found else model
    return f"{os.cpu_count()} cores, {model}, Python {platform.python_version()}, {platform.system()}"


def _runs_of(results: list[Result], contender: str) -> dict[tuple[str, int], Result]:
    """``contender``'s result for each (workload, connections): what the other rows are held against."""
    return {(r.workload, r.connections): r for r in results if r.contender == contender}


def _workload(result: Result) -> tuple[str, bool]:
    scenario, kind = result.workload.split()
    return scenario, kind == "stream"


def table(results: list[Result], starts: dict, rss: dict) -> str:
    floor, live = _runs_of(results, FLOOR), _runs_of(results, "llama-server")
    lines = [
        "| contender | workload | conns | req/s | p50 ms | p99 ms | vs floor | vs floor, paired | "
        "vs floor, each round | vs llama-server |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in sorted(results, key=lambda r: (WORKLOADS.index(_workload(r)), r.connections)):
        key = (r.workload, r.connections)
        base = floor.get(key)
        vs_floor = "-" if base is None else _ratio(r.rps, base.rps)
        paired, each = _paired(r, base), _each_round(r, base)
        vs_live = f"{r.rps / live[key].rps:.0f}x" if key in live and r.contender != "llama-server" else "-"
        rps = f"{r.rps:,.0f}" if r.rps >= 10 else f"{r.rps:.2f}"
        lines.append(
            f"| {r.contender} | {r.workload} | {r.connections} | {rps} | {r.p50_ms:.2f} | "
            f"{r.p99_ms:.2f} | {vs_floor} | {paired} | {each} | {vs_live} |"
        )
    lines += ["", "| contender | start to first 200 | peak RSS |", "| --- | --- | --- |"]
    lines += [f"| {name} | {starts[name] * 1000:.0f} ms | {rss[name]:.1f} MB |" for name in starts]
    return "\n".join(lines)


PEER_BASE = "mockllama buggy"  # mockllama as it starts by default, the row each peer is held against


def peer_contenders(port_for, workdir: Path) -> tuple[list[Contender], list[str]]:
    """Every peer installed here, and how to install the others."""
    found, missing = [], []
    for peer in PEERS:
        problem = peer.missing()
        if problem:
            missing.append(problem)
        else:
            found.append(peer_contender(peer, port_for(), workdir))
    return found, missing


HELD_AGAINST_BUGGY = ("mockllama fixed", "mockllama spec")  # each against PEER_BASE, the replay as recorded


def behaviour_table(results: list[Result]) -> str:
    """fixed and spec against buggy, workload by workload: what the honest statuses and the
    reference format cost over the replay as recorded (above 1: faster than buggy); of the medians,
    then paired round by round, as the ratios to the floor are, and each round's own ratio, whose
    spread is the VM's: the three run the same code but for the body's rewrite."""
    buggy = _runs_of(results, PEER_BASE)
    lines = [
        "| behaviour | workload | conns | vs buggy | vs buggy, paired | each round, paired |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        base = buggy.get((r.workload, r.connections))
        if r.contender in HELD_AGAINST_BUGGY and base is not None:
            lines.append(
                f"| {r.contender} | {r.workload} | {r.connections} | {_ratio(r.rps, base.rps)} | "
                f"{_paired(r, base)} | {_each_round(r, base)} |"
            )
    return "\n".join(lines)


def _ratio(mine: float, theirs: float, digits: int = 2) -> str:
    return f"{mine / theirs:.{digits}f}x" if theirs else "-"


def peer_table(results: list[Result], peers: list[str]) -> str:
    """One column per peer, and mockllama/peer for req/s (above 1: mockllama serves more; of the
    medians, then paired round by round) and for p50 (below 1: mockllama answers sooner). Beside
    them, paired, the ceilings: floor/peer, what a server that does nothing but send the same
    bytes through an aiohttp application showed against that peer in the same rounds, and
    low-level/peer, the same from aiohttp's low-level server, the most any server on aiohttp
    showed. No ratio of mockllama's can exceed the first but by the VM's noise."""
    by_key = {(r.contender, r.workload, r.connections): r for r in results}
    ceilings = [("floor", _runs_of(results, FLOOR)), ("low-level", _runs_of(results, LOW_LEVEL))]
    head = (
        ["workload", "conns", "mockllama req/s"]
        + [f"{p} req/s" for p in peers]
        + [f"mockllama/{p} req/s" for p in peers]
        + [f"mockllama/{p} req/s, paired" for p in peers]
        + [f"{name}/{p} req/s, paired" for name, _ in ceilings for p in peers]
        + ["mockllama p50 ms"]
        + [f"{p} p50 ms" for p in peers]
        + [f"mockllama/{p} p50" for p in peers]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in (r for r in results if r.contender == PEER_BASE):
        theirs = [by_key.get((p, r.workload, r.connections)) for p in peers]
        ceiling_runs = [runs.get((r.workload, r.connections)) for _, runs in ceilings]
        cells = (
            [r.workload, str(r.connections), f"{r.rps:,.0f}"]
            + [f"{t.rps:,.0f}" if t else "not served" for t in theirs]
            + [_ratio(r.rps, t.rps) if t else "-" for t in theirs]
            + [_paired(r, t) for t in theirs]
            + [_paired(ceiling, t) if ceiling else "-" for ceiling in ceiling_runs for t in theirs]
            + [f"{r.p50_ms:.2f}"]
            + [f"{t.p50_ms:.2f}" if t else "-" for t in theirs]
            + [_ratio(r.p50_ms, t.p50_ms) if t else "-" for t in theirs]
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# The target (docs/performance.md): mockllama at least this share of the floor's own ratio to each
# peer, on every workload; and on the JSON workload, at least this share of the floor itself.
OF_FLOORS_RATIO = 0.95
JSON_OF_FLOOR = 0.85


def target_table(results: list[Result], peers: list[str]) -> str:
    """The target, workload by workload: against each peer, mockllama/peer divided by floor/peer
    (the ratio of ratios: how much of what the floor shows against that peer mockllama keeps), and
    on the JSON workload mockllama against the floor itself; each ratio paired round by round."""
    by_key = {(r.contender, r.workload, r.connections): r for r in results}
    floor = _runs_of(results, FLOOR)
    lines = [
        "| workload | conns | against | mockllama/it, paired | floor/it, paired | ratio of ratios | at least | met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def row(mine: Result, against: str, theirs: Result, base: Result, least: float) -> str:
        mine_ratio, floor_ratio = paired_ratio(mine, theirs), paired_ratio(base, theirs)
        if mine_ratio is None or floor_ratio is None:
            return f"| {mine.workload} | {mine.connections} | {against} | - | - | - | {least:.2f}x | - |"
        kept = mine_ratio / floor_ratio
        return (
            f"| {mine.workload} | {mine.connections} | {against} | {mine_ratio:.2f}x | {floor_ratio:.2f}x | "
            f"{kept:.2f}x | {least:.2f}x | {'yes' if kept >= least else 'no'} |"
        )

    for mine in (r for r in results if r.contender == PEER_BASE):
        base = floor.get((mine.workload, mine.connections))
        if base is None:
            continue
        for peer in peers:
            theirs = by_key.get((peer, mine.workload, mine.connections))
            if theirs is not None:
                lines.append(row(mine, peer, theirs, base, OF_FLOORS_RATIO))
        if mine.workload.endswith("json"):
            lines.append(row(mine, "the floor", base, base, JSON_OF_FLOOR))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--duration", type=int, help="whole seconds of each wrk run (default 3; with --cache-misses, 20)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="turns each contender takes per workload (default 3)")
    parser.add_argument(
        "--start-rounds",
        type=int,
        default=7,
        metavar="N",
        help="rounds of the start-up comparison: serve's start, pytest sessions with the plugin, and "
        "aimock's start (default 7)",
    )
    parser.add_argument("--llama-server", metavar="URL", help="also measure a live llama-server at URL")
    parser.add_argument(
        "--journal-cost",
        action="store_true",
        help="measure only mockllama with the journal on against off (--journal-size 0), in turns: "
        "req/s, server CPU per request, and journalling's own time per request in process",
    )
    parser.add_argument("--no-peers", action="store_true", help="leave out the peer mock servers (aimock, mock-llm)")
    parser.add_argument(
        "--install-peers",
        action="store_true",
        help="npm install the peer mock servers into MOCKLLAMA_PEERS_DIR (default ~/.cache/mockllama/peers) and stop",
    )
    parser.add_argument(
        "--scale",
        action="store_true",
        help="measure only how start-up, memory, the scenarios command, matching and the 404 "
        "grow with the number of recordings (synthetic cassette directories)",
    )
    parser.add_argument("--with-scale", action="store_true", help="the comparison, then --scale, in one run")
    parser.add_argument(
        "--scale-sizes",
        default="100 1000 10000",
        metavar="'N N ...'",
        help="the synthetic directories' sizes in scenarios (default '100 1000 10000')",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="measure only the instructions each server executes per JSON request, under valgrind's "
        "callgrind (the same whatever else the machine does), and its ratio to the floor",
    )
    parser.add_argument(
        "--requests",
        type=int,
        default=2000,
        metavar="N",
        help="with --instructions: the requests counted (default 2000)",
    )
    parser.add_argument(
        "--cache-misses",
        action="store_true",
        help="measure only the floor and mockllama with the journal on and off under callgrind's "
        "cache simulation, at --connections for --duration seconds: instructions, L1d and L2 "
        "misses per request",
    )
    parser.add_argument(
        "--connections", type=int, default=64, metavar="N", help="with --cache-misses: wrk's connections (default 64)"
    )
    args = parser.parse_args(argv)
    if args.duration is None:
        args.duration = 20 if args.cache_misses else 3

    if args.install_peers:
        try:
            return install_peers()
        except (RuntimeError, subprocess.CalledProcessError) as err:
            sys.exit(f"python -m benchmarks: could not install the peers: {err}")
    if args.instructions:
        print(f"# mockllama instructions per request, {time.strftime('%Y-%m-%d')}, {machine()}", flush=True)
        print("\n" + run_instructions(args.requests), flush=True)
        return
    if args.cache_misses:
        print(f"# mockllama cache misses per request, {time.strftime('%Y-%m-%d')}, {machine()}", flush=True)
        port = free_port()
        entries = [Contender(FLOOR, floor_command(port), port), *journal_contenders(free_port)]
        print("\n" + run_cache_misses(entries, args.connections, args.duration), flush=True)
        return
    if shutil.which("wrk") is None:
        sys.exit("python -m benchmarks needs wrk: apt-get install wrk")
    try:
        sizes = parse_sizes(args.scale_sizes)
    except ValueError:
        sys.exit(
            "python -m benchmarks: --scale-sizes wants whole numbers, such as '100 1000 10000', "
            f"not {args.scale_sizes!r}"
        )
    print(f"# mockllama benchmark, {time.strftime('%Y-%m-%d')}, {machine()}", flush=True)
    compile_bytecode()  # every server started below reads it, as from an installed wheel
    if not args.scale:
        compare(args)
    if args.scale or args.with_scale:
        print("\n" + run_scale(sizes, args.duration, free_port), flush=True)


def compare(args) -> None:
    """mockllama against the floor, the peers and (optionally) llama-server, the contenders in turns."""
    starts, processes, targets, found, missing = {}, {}, {}, [], []
    with tempfile.TemporaryDirectory(prefix="mockllama-bench-") as workdir:
        entries = (journal_contenders if args.journal_cost else contenders)(free_port)
        if not (args.journal_cost or args.no_peers):
            found, missing = peer_contenders(free_port, Path(workdir))
            entries += found
            for problem in missing:
                print(f"not measured: {problem}", file=sys.stderr, flush=True)
        by_name = {contender.name: contender for contender in entries}
        try:
            for contender in entries:
                times = []
                for _ in range(3):
                    process, seconds = start_contender(contender)
                    times.append(seconds)
                    if len(times) < 3:
                        process.terminate()
                        process.wait(timeout=20)
                starts[contender.name], processes[contender.name] = statistics.median(times), process
                targets[contender.name] = Target(
                    contender.url, args.duration, args.rounds, workloads=contender.workloads
                )
            if args.journal_cost:
                pids = {name: (target.url, processes[name].pid) for name, target in targets.items()}
                cpu_table = journal_cpu_cost(pids, args.duration, args.rounds)
            results = measure(targets)
            rss = {name: peak_rss_mb(process) for name, process in processes.items()}
            peers = [contender.name for contender in found]
            fidelity = [
                fidelity_row(name, by_name[name].port, by_name[name].workloads)
                for name in [PEER_BASE, *peers]
                if name in targets
            ]
            if args.llama_server:
                # Last, so that the generations it keeps running after wrk stops slow nobody else down.
                # Its replies take 0.1 to 1 s each: one long run per workload says enough.
                live = Target(args.llama_server.rstrip("/"), max(args.duration, 20), 1, settle=True)
                results += measure({"llama-server": live})
        finally:
            for process in processes.values():
                process.terminate()
                process.wait(timeout=20)
        if not args.journal_cost:  # after the others, each start on a quiet machine
            aimock = by_name.get(AIMOCK.name)
            startups = measure_startup(args.start_rounds, aimock, free_port, Path(workdir))
    print(table(results, starts, rss))
    if args.journal_cost:
        print("\n" + journal_cost(results) + "\n\n" + cpu_table)
        print("\n" + journalling_share(*journalling_microseconds(), cpu_table))
        return
    print("\n" + behaviour_table(results))
    if peers:
        print("\n" + peer_table(results, peers) + "\n\n" + fidelity_table(fidelity))
    print("\n" + target_table(results, peers))
    print("\n" + startup_table(startups) + "\n\n" + startup_verdict(startups) + "\n" + fixture_verdict(startups))
    for problem in missing:
        print(f"\nnot measured: {problem}")
