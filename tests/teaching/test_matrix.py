"""The real-client matrix: a fresh run of the openai SDK against every behaviour and scenario."""

from __future__ import annotations

import pytest

from mockllama.behaviours.variants import REPLIES, VARIANTS
from mockllama.teaching import matrix
from support import ROOT

PAGE = ROOT / "docs" / "behaviours.md"  # where the matrix is shown
CRASH = "TypeError: list indices must be integers or slices, not NoneType"
NO_COMPLETED = "RuntimeError: Didn't receive a `response.completed` event."


@pytest.fixture(scope="module")
def rows(scenarios):
    return {(row.scenario, row.behaviour): row for row in matrix.run(scenarios)}


def test_the_docs_matrix_matches_a_fresh_run(rows):
    fresh = matrix.render(list(rows.values()))
    assert matrix.table_in(PAGE.read_text()) == fresh, (
        "run: python -m mockllama.teaching.matrix --write docs/behaviours.md"
    )


@pytest.mark.parametrize("name", ["text-cut-8", "text-cut-64", "text-finishes", "text-exact-limit"])
def test_helper_crashes_on_llama_server_text_streams_in_buggy_and_fixed(rows, name):
    assert rows[(name, "buggy")].helper == CRASH
    assert rows[(name, "fixed")].helper == CRASH


def test_spec_helper_finishes_finished_replies_and_raises_on_cut_ones(rows):
    for (name, behaviour), row in rows.items():
        if behaviour != "spec":
            continue
        if row.finish_reason == "length":
            assert row.helper == NO_COMPLETED, name
        else:
            assert row.helper == "final response, status completed", name


def test_only_buggy_reports_cut_replies_as_completed(rows):
    for (name, behaviour), row in rows.items():
        if behaviour in REPLIES:
            continue  # another server's variant: the next test
        cut = row.finish_reason == "length"
        expected = "completed" if behaviour == "buggy" or not cut else "incomplete"
        assert (row.status, row.terminal_status) == (expected, expected), (name, behaviour)
        assert row.terminal_event == f"response.{expected}"


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.name in REPLIES], ids=lambda v: v.name)
def test_the_sdk_reads_each_variant_s_status_and_terminal_event_as_its_server_writes_them(rows, variant):
    for (name, behaviour), row in rows.items():
        if behaviour != variant.name:
            continue
        cut = row.finish_reason == "length"
        said = (str(variant.body.when(cut).status), variant.terminal.when(cut), str(variant.stream.when(cut).status))
        assert (row.status, row.terminal_event, row.terminal_status) == said, name
