"""The benchmark the README documents still runs and prints its whole table (numbers not judged)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest


def test_benchmark_prints_every_contender_workload_and_figure():
    if os.environ.get("MOCKLLAMA_BENCH") == "0":
        pytest.skip("MOCKLLAMA_BENCH=0: the benchmark smoke run is switched off")
    if shutil.which("wrk") is None:
        pytest.fail("the benchmark needs wrk: apt-get install wrk (or set MOCKLLAMA_BENCH=0)")
    result = subprocess.run([sys.executable, "-m", "mockllama.bench", "--duration", "1", "--rounds", "1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = re.findall(r"^\| (floor \(bare aiohttp\)|mockllama buggy|mockllama fixed|mockllama spec) \| (.+?) \| (\d+) \| ([\d,]+) \|",
                      result.stdout, re.M)
    assert len(rows) == 16
    assert {(row[1], row[2]) for row in rows} == {("text-cut-8 json", "1"), ("text-cut-8 json", "64"),
                                                 ("poem-finishes stream", "1"), ("poem-finishes stream", "64")}
    assert all(int(row[3].replace(",", "")) > 0 for row in rows)
    assert len(re.findall(r"^\| .+ \| \d+ ms \| [\d.]+ MB \|$", result.stdout, re.M)) == 4
