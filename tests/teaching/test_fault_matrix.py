"""The fault matrix: a fresh run of the openai SDK, sync and async, under every fault."""

from __future__ import annotations

import pytest

from mockllama.server.faults import KINDS
from mockllama.teaching import fault_matrix
from support import ROOT

PAGE = ROOT / "docs" / "faults.md"  # where the table is shown


@pytest.fixture(scope="module")
def rows(scenarios):
    return {row.fault: row for row in fault_matrix.run(scenarios)}


def test_the_docs_fault_table_matches_a_fresh_run(rows):
    fresh = fault_matrix.render(list(rows.values()))
    assert fault_matrix.table_in(PAGE.read_text()) == fresh, (
        "run: python -m mockllama.teaching.fault_matrix --write docs/faults.md"
    )


def test_the_docs_list_of_faults_is_the_registry():
    assert fault_matrix.kinds_table_in(PAGE.read_text()) == fault_matrix.render_kinds(), (
        "run: python -m mockllama.teaching.fault_matrix --write docs/faults.md"
    )


def test_the_matrix_measures_every_registered_fault(rows):
    assert {fault.partition("=")[0] for fault in rows} == set(KINDS)


def test_sync_and_async_agree_under_every_fault(rows):
    assert all(row.async_same for row in rows.values()), [r.fault for r in rows.values() if not r.async_same]


def test_a_clean_end_without_a_terminal_event_passes_silently_through_create(rows):
    row = rows["truncate-stream=3"]
    assert row.stream == "ends silently after 3 events (last response.output_item.added)"
    assert row.helper == "RuntimeError: Didn't receive a `response.completed` event."


def test_a_dropped_connection_raises_and_is_retried(rows):
    for fault in ("disconnect=0", "disconnect-bytes=100"):
        assert rows[fault].create == rows[fault].stream == "APIConnectionError: Connection error."
        assert rows[fault].requests_with_retries == 3
    assert rows["disconnect=3"].stream == "APIConnectionError: Connection error."


def test_a_body_cut_mid_json_escapes_the_sdks_own_exceptions(rows):
    row = rows["truncate-json"]
    assert row.create.startswith("JSONDecodeError: ") and row.requests_with_retries == 1


def test_stalls_time_out_and_are_retried(rows):
    for fault in ("stall=1000", "stall-between=1000"):
        assert rows[fault].create == "APITimeoutError: Request timed out."
        assert rows[fault].requests_with_retries == 3


def test_recorded_statuses_raise_the_sdks_status_errors(rows):
    assert rows["status=500"].create.startswith("InternalServerError: Error code: 500")
    assert rows["status=500"].requests_with_retries == 3
    assert rows["status=400"].create.startswith("BadRequestError: Error code: 400")
    assert rows["status=400"].requests_with_retries == 1


def test_the_sdk_waits_out_a_503s_retry_after_only_up_to_its_limit(rows):
    assert rows["unavailable=1"].create.startswith("InternalServerError: Error code: 503")
    assert rows["unavailable=1"].requests_with_retries == 3  # retried, a second apart
    assert rows["unavailable=300"].requests_with_retries == 1  # past the SDK's two minutes: not retried
