"""Start-up beside aimock's: ``mockllama serve`` from process start to its first 200, and pytest
sessions with the plugin, against aimock from process start to its first 200.

Each round starts every one of them once, in turn, each pinned to the server's core as the
servers are; the table gives the median of the rounds and, paired, the median of each round's
own ratio to aimock's start in the same round (below 1: sooner than aimock). Three pytest
sessions run one test each, with no plugin but mockllama's (PYTEST_DISABLE_PLUGIN_AUTOLOAD, so
that whatever else is installed here does not drown it): one that uses the ``mockllama`` fixture
(it starts the plugin's server and sends one request), one that does not (pytest loads the
plugin all the same), and the same without the plugin: the last is pytest's own cost, which the
other two add mockllama's to. What the fixture costs a session is the first against the second,
paired: the median of each round's difference (``fixture_verdict``). Bytecode is written first
(harness.compile_bytecode), as an installed wheel has it.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from benchmarks.harness import (
    PLUGIN_TEST,
    TEXT,
    Contender,
    compile_bytecode,
    mockllama_command,
    pytest_session_seconds,
    request_body,
    start_contender,
)

AIMOCK_START = "aimock: process start to its first 200"
SERVE_START = "mockllama serve: process start to its first 200"
WITH_FIXTURE = "pytest: one test using the mockllama fixture, one request"
WITHOUT_FIXTURE = "pytest: one test not using it (the plugin loaded)"
WITHOUT_PLUGIN = "pytest: one test, the plugin not loaded"
# The target (docs/performance.md): serve's start at most aimock's.
START_TARGET = 1.0
# The target (issue 56): a session of one test that uses the fixture and makes one request at most
# this many seconds longer than one that does not use it, paired round by round.
FIXTURE_TARGET = 0.060


def _started(contender: Contender) -> float:
    process, seconds = start_contender(contender)
    process.terminate()
    process.wait(timeout=20)
    return seconds


def measure_startup(rounds: int, aimock: Contender | None, port_for, workdir: Path) -> dict[str, list[float]]:
    """Each start-up's seconds, round by round, the starts of a round one after another."""
    compile_bytecode()
    sessions = workdir / "startup-sessions"
    sessions.mkdir(exist_ok=True)
    with_fixture = sessions / "test_with_fixture.py"
    with_fixture.write_text(PLUGIN_TEST.format(body=request_body(*TEXT)))
    without_fixture = sessions / "test_without_fixture.py"
    without_fixture.write_text("def test_nothing():\n    pass\n")
    port = port_for()
    serve = Contender("mockllama serve", mockllama_command(port), port)
    alone = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    plugin = ("-p", "mockllama.pytest_plugin")
    starts = {
        **({AIMOCK_START: lambda: _started(aimock)} if aimock is not None else {}),
        SERVE_START: lambda: _started(serve),
        WITH_FIXTURE: lambda: pytest_session_seconds(with_fixture, *plugin, pinned=True, env=alone),
        WITHOUT_FIXTURE: lambda: pytest_session_seconds(without_fixture, *plugin, pinned=True, env=alone),
        WITHOUT_PLUGIN: lambda: pytest_session_seconds(without_fixture, pinned=True, env=alone),
    }
    times: dict[str, list[float]] = {name: [] for name in starts}
    for _ in range(rounds):
        for name, start in starts.items():
            times[name].append(start())
    print("measured the start-ups", file=sys.stderr, flush=True)
    return times


def startup_table(times: dict[str, list[float]]) -> str:
    """Median wall time, then each against aimock's start: of the medians, paired, and each round."""
    aimock = times.get(AIMOCK_START)
    lines = [
        "| start-up | wall time | vs aimock's start | vs aimock's start, paired | each round |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, seconds in times.items():
        median = statistics.median(seconds)
        if aimock is None:
            cells = ["-", "-", "-"]
        else:
            rounds = [mine / theirs for mine, theirs in zip(seconds, aimock)]
            cells = [
                f"{median / statistics.median(aimock):.2f}x",
                f"{statistics.median(rounds):.2f}x",
                ", ".join(f"{ratio:.2f}x" for ratio in rounds),
            ]
        lines.append(f"| {name} | {median * 1000:,.0f} ms | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def startup_verdict(times: dict[str, list[float]]) -> str:
    """Whether serve's start, paired, is at most aimock's (START_TARGET)."""
    aimock = times.get(AIMOCK_START)
    if aimock is None:
        return "serve's start against aimock's: not measured (aimock is not installed)"
    paired = statistics.median(mine / theirs for mine, theirs in zip(times[SERVE_START], aimock))
    met = "met" if paired <= START_TARGET else "not met"
    return (
        f"serve's start to its first 200 is {paired:.2f}x aimock's, paired: "
        f"the target, at most {START_TARGET:.2f}x, is {met}"
    )


def fixture_verdict(times: dict[str, list[float]]) -> str:
    """What the fixture adds to a session of one test, paired: the median of each round's session
    with it less the same round's session without it (the plugin loaded in both), against
    FIXTURE_TARGET."""
    extra = [mine - theirs for mine, theirs in zip(times[WITH_FIXTURE], times[WITHOUT_FIXTURE])]
    paired = statistics.median(extra)
    each = ", ".join(f"{seconds * 1000:,.0f}" for seconds in extra)
    met = "met" if paired <= FIXTURE_TARGET else "not met"
    return (
        f"the mockllama fixture adds {paired * 1000:,.0f} ms to a session of one test, paired (each round: "
        f"{each} ms): the target, at most {FIXTURE_TARGET * 1000:.0f} ms, is {met}"
    )
