"""mockllama.upstream.spool: a reply held in memory while small, in a temporary file past that; and
the byte budget that all replies in flight share (issue 47 item 7)."""

from __future__ import annotations

import pytest

from mockllama.upstream.spool import DEFAULT_REPLY_BUDGET, SPOOL_THRESHOLD, ReplyBudget, Spool

BLOCKS = [b"data: 1\n\n", b"data: 22\n\n", b"x" * 5000, b"", b"data: 333\n\n"]


def test_the_defaults_are_a_mebibyte_in_memory_and_four_capped_replies_in_flight():
    assert SPOOL_THRESHOLD == 1024 * 1024
    assert DEFAULT_REPLY_BUDGET == 4 * 64 * 1024 * 1024


@pytest.mark.parametrize("threshold", [10**9, 20, 0], ids=["in-memory", "spooled-midway", "spooled-at-once"])
def test_blocks_come_back_as_they_went_in_wherever_they_are_held(threshold):
    spool = Spool(threshold)
    for start in range(0, len(BLOCKS), 2):
        spool.extend(BLOCKS[start : start + 2])
    assert spool.spooled is (threshold < sum(map(len, BLOCKS)))
    assert len(spool) == len(BLOCKS) and spool.size == sum(map(len, BLOCKS))
    assert spool.blocks(0, len(spool)) == BLOCKS
    assert spool.read() == b"".join(BLOCKS)
    spool.close()


def test_a_reply_past_the_threshold_leaves_memory_for_a_file():
    spool = Spool(threshold=16)
    spool.extend([b"0123456789"])
    assert not spool.spooled and spool._memory == b"0123456789"
    spool.extend([b"abcdefghij"])
    assert spool.spooled and spool._memory == b""
    assert spool.read() == b"0123456789abcdefghij"
    file = spool._file
    spool.close()
    assert file is not None and file.closed and not spool.spooled


def test_the_budget_refuses_what_would_pass_its_limit_and_takes_back_what_is_given():
    budget = ReplyBudget(100)
    assert budget.take(60) and budget.held == 60
    assert not budget.fits(41) and not budget.take(41) and budget.held == 60
    assert budget.take(40) and budget.held == 100
    budget.give(100)
    assert budget.held == 0 and budget.fits(100)
