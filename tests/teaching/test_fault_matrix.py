"""The fault matrix: a fresh run of the openai SDK, sync and async, under every fault, held to the
page and to what each fault's own module declares the SDK does (``SdkOutcome``)."""

from __future__ import annotations

import pytest

from mockllama.server.faults import KINDS, parse_fault
from mockllama.teaching import fault_matrix
from support import ROOT
from support.recordings import SCENARIOS

PAGE = ROOT / "docs" / "faults.md"  # where the table is shown


@pytest.fixture(scope="module")
def rows(scenarios):
    return {row.fault: row for row in fault_matrix.run(scenarios)}


def test_the_docs_fault_table_matches_a_fresh_run(rows):
    fresh = fault_matrix.render(list(rows.values()))
    assert fault_matrix.table_in(PAGE.read_text()) == fresh, (
        "run: python -m mockllama.teaching.fault_matrix --write docs/faults.md"
    )


def test_the_matrix_measures_every_registered_fault(rows):
    assert {fault.partition("=")[0] for fault in rows} == set(KINDS)


def test_sync_and_async_agree_under_every_fault(rows):
    assert all(row.async_same for row in rows.values()), [r.fault for r in rows.values() if not r.async_same]


@pytest.mark.parametrize("fault", fault_matrix.faults_measured(SCENARIOS))
def test_the_sdk_does_what_the_faults_own_module_declares(rows, fault):
    declared_in = type(parse_fault(fault).kind).__module__
    assert fault_matrix.unexpected(rows[fault]) == [], f"what {declared_in} declares"


def test_a_row_unlike_its_declaration_is_told_cell_by_cell():
    """The comparison itself, on a made-up row: a cell that begins otherwise, a count that differs."""
    connection = "APIConnectionError: Connection error."
    row = fault_matrix.Row("disconnect=0", connection, "returns, status completed", connection, "", "", "", 1)
    assert fault_matrix.unexpected(row) == [
        f"create(stream=True): 'returns, status completed' does not begin {connection!r}",
        "requests with max_retries=2: 1, not 3",
    ]
    assert fault_matrix.unexpected(fault_matrix.Row("disconnect=0", *[connection] * 6, 3)) == []
