"""The benchmark's ratios (benchmarks.run): of the medians, and paired round by round.

A paired ratio holds each round's run against the other contender's run of the same round, so
that a VM that slows down for one round moves both sides of that round's ratio alike."""

from __future__ import annotations

from benchmarks.run import Result, behaviour_table, paired_ratio, peer_table, table, target_table
from benchmarks.startup import (
    AIMOCK_START,
    SERVE_START,
    WITH_FIXTURE,
    WITHOUT_FIXTURE,
    fixture_verdict,
    startup_table,
    startup_verdict,
)

JSON = "text-cut-8 json"


def _result(contender: str, rounds: tuple[float, ...]) -> Result:
    ordered = sorted(rounds)
    return Result(contender, JSON, 64, ordered[len(ordered) // 2], 1.0, 2.0, rounds)


# The VM runs faster in the second round for both: the medians' ratio (95 / 100) is what the
# contender did in its best round only; round by round it ran at 0.9x, 0.75x and 0.95x the floor.
FLOOR = _result("floor (bare aiohttp)", (100.0, 200.0, 100.0))
BUGGY = _result("mockllama buggy", (90.0, 150.0, 95.0))


def test_a_paired_ratio_is_the_median_of_each_rounds_ratio():
    assert paired_ratio(BUGGY, FLOOR) == 0.9  # the rounds: 0.9, 0.75, 0.95
    assert BUGGY.rps / FLOOR.rps == 0.95


def test_the_table_gives_both_ratios_to_the_floor_and_each_rounds_own():
    rows = {
        line.split(" | ")[0].lstrip("| "): line.strip("|").split("|")
        for line in table([FLOOR, BUGGY], {}, {}).splitlines()[2:]
        if line.startswith("| ")
    }
    assert [cell.strip() for cell in rows["mockllama buggy"][6:9]] == ["0.95x", "0.90x", "0.90x, 0.75x, 0.95x"]
    assert [cell.strip() for cell in rows["floor (bare aiohttp)"][6:9]] == ["1.00x", "1.00x", "1.00x, 1.00x, 1.00x"]


def test_the_peer_table_gives_both_ratios_to_each_peer():
    peer = _result("aimock", (50.0, 100.0, 50.0))
    line = peer_table([BUGGY, peer], ["aimock"]).splitlines()[2]
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    assert cells[4:6] == ["1.90x", "1.80x"]  # 95 / 50 of the medians; 1.8, 1.5, 1.9 round by round
    assert cells[6] == "-"  # no floor measured: no ceiling to give


def test_the_peer_table_gives_the_floors_own_ratio_to_each_peer_as_the_ceiling():
    peer = _result("aimock", (50.0, 80.0, 40.0))
    lines = peer_table([FLOOR, BUGGY, peer], ["aimock"]).splitlines()
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    cells = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert head[4:7] == ["mockllama/aimock req/s", "mockllama/aimock req/s, paired", "floor/aimock req/s, paired"]
    # mockllama's rounds 90, 150, 95 against aimock's 50, 80, 40: 1.8, 1.875, 2.375; the floor's
    # 100, 200, 100: 2.0, 2.5, 2.5
    assert cells[4:7] == ["1.90x", "1.88x", "2.50x"]


def test_the_peer_table_gives_the_low_level_servers_own_ratio_to_each_peer_beside_the_floors():
    peer = _result("aimock", (50.0, 80.0, 40.0))
    low_level = _result("aiohttp low-level server", (110.0, 160.0, 120.0))  # 2.2, 2.0, 3.0 against aimock
    lines = peer_table([FLOOR, low_level, BUGGY, peer], ["aimock"]).splitlines()
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    cells = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert head[6:8] == ["floor/aimock req/s, paired", "low-level/aimock req/s, paired"]
    assert cells[6:8] == ["2.50x", "2.20x"]
    line = peer_table([FLOOR, BUGGY, peer], ["aimock"]).splitlines()[2]
    assert [cell.strip() for cell in line.strip("|").split("|")][7] == "-"  # not measured: no second ceiling


def test_a_contender_measured_in_other_rounds_gets_no_paired_ratio():
    # --llama-server runs one long round after the others: nothing to pair it with
    live = Result("llama-server", JSON, 64, 20.0, 100.0, 200.0, (20.0,))
    assert paired_ratio(live, FLOOR) is None
    rows = [
        line.strip("|").split("|")
        for line in table([FLOOR, BUGGY, live], {}, {}).splitlines()
        if line.startswith("| llama-server ")
    ]
    assert [cell.strip() for cell in rows[0][6:10]] == ["0.20x", "-", "-", "-"]


def test_fixed_and_spec_are_held_against_buggy_both_ways():
    fixed = _result("mockllama fixed", (81.0, 150.0, 90.0))  # 0.9x, 1.0x, 0.947x buggy round by round
    spec = _result("mockllama spec", (90.0, 120.0, 95.0))  # 1.0x, 0.8x, 1.0x
    lines = behaviour_table([FLOOR, BUGGY, fixed, spec]).splitlines()
    assert lines[0] == "| behaviour | workload | conns | vs buggy | vs buggy, paired | each round, paired |"
    assert lines[2:] == [
        "| mockllama fixed | text-cut-8 json | 64 | 0.95x | 0.95x | 0.90x, 1.00x, 0.95x |",
        "| mockllama spec | text-cut-8 json | 64 | 1.00x | 1.00x | 1.00x, 0.80x, 1.00x |",
    ]
    # Its median (99) is from the round where buggy ran at 90, buggy's median (95) from another:
    # the medians say 4% faster, the rounds 1.1x, 0.8x and 0.84x.
    other_rounds = _result("mockllama fixed", (99.0, 120.0, 80.0))
    assert behaviour_table([BUGGY, other_rounds]).splitlines()[2:] == [
        "| mockllama fixed | text-cut-8 json | 64 | 1.04x | 0.84x | 1.10x, 0.80x, 0.84x |"
    ]


def test_the_target_holds_mockllamas_ratio_to_each_peer_against_the_floors_own():
    peer = _result("aimock", (50.0, 100.0, 40.0))  # mockllama 1.8, 1.5, 2.375; the floor 2.0, 2.0, 2.5
    rows = [line.strip("|").split("|") for line in target_table([FLOOR, BUGGY, peer], ["aimock"]).splitlines()[2:]]
    against_peer, against_floor = ([cell.strip() for cell in row] for row in rows)
    # mockllama/aimock paired 1.80x, floor/aimock paired 2.00x: 0.90 of the floor's ratio, under 0.95
    assert against_peer == [JSON, "64", "aimock", "1.80x", "2.00x", "0.90x", "0.95x", "no"]
    # the JSON workload against the floor itself: 0.90x paired, over 0.85
    assert against_floor == [JSON, "64", "the floor", "0.90x", "1.00x", "0.90x", "0.85x", "yes"]


def test_a_peer_that_does_not_serve_a_workload_has_no_target_row_for_it():
    stream = "poem-finishes stream"
    floor, mine = (
        Result(FLOOR.contender, stream, 1, 10, 1, 1, (10.0,)),
        Result(BUGGY.contender, stream, 1, 9, 1, 1, (9.0,)),
    )
    assert target_table([floor, mine], ["mock-llm"]).splitlines()[2:] == []  # and no floor row: not JSON


def test_start_up_is_held_against_aimocks_start_round_by_round():
    times = {AIMOCK_START: [0.2, 0.3, 0.2], SERVE_START: [0.18, 0.36, 0.24]}  # 0.9x, 1.2x, 1.2x
    lines = startup_table(times).splitlines()
    assert lines[3] == f"| {SERVE_START} | 240 ms | 1.20x | 1.20x | 0.90x, 1.20x, 1.20x |"
    assert startup_verdict(times).endswith("1.20x aimock's, paired: the target, at most 1.00x, is not met")
    times[SERVE_START] = [0.18, 0.27, 0.2]  # 0.9x, 0.9x, 1.0x
    assert startup_verdict(times).endswith("is met")


def test_the_fixtures_cost_is_each_rounds_difference_paired():
    times = {WITH_FIXTURE: [0.30, 0.45, 0.31], WITHOUT_FIXTURE: [0.25, 0.30, 0.20]}  # 50, 150, 110 ms
    assert fixture_verdict(times) == (
        "the mockllama fixture adds 110 ms to a session of one test, paired (each round: 50, 150, 110 ms): "
        "the target, at most 60 ms, is not met"
    )
    times[WITH_FIXTURE] = [0.30, 0.33, 0.24]  # 50, 30, 40 ms: the median of the differences, not of the times
    assert fixture_verdict(times).endswith(
        "adds 40 ms to a session of one test, paired (each round: 50, 30, 40 ms): the target, at most 60 ms, is met"
    )
