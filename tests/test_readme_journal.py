"""The README's journal examples, run as written: the ```python block of "What did my client send?
The journal" becomes a test file of its own, run by pytest with the mockllama plugin, with
``examples/`` on the path (the truncation-safe client) and RECORDED_500_REQUEST taken from the
recordings."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## What did my client send? The journal"

pytest_plugins = ["pytester"]

PRELUDE = '''
from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios

RECORDED_500_REQUEST = next(i.request_json for i in load_scenarios([bundled_cassette_dir()])["errors"].interactions
                            if i.status == 500)
'''


def readme_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    part = text[text.index(SECTION):]
    part = part[: part.index("\n## ", len(SECTION))]
    (block,) = re.findall(r"```python\n(.*?)```", part, re.S)
    return block


def test_the_readme_journal_examples_pass_as_written(pytester, monkeypatch):
    block = readme_block()
    tests = re.findall(r"^def (test_\w+)\(", block, re.M)
    assert "test_the_truncation_safe_client_retried_with_a_doubled_limit" in tests
    pytester.makepyfile(test_readme_journal=PRELUDE + block)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT / "examples"), os.environ.get("PYTHONPATH")])))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    assert result.ret == 0, result.stdout.str()[-4000:]
    result.assert_outcomes(passed=len(tests))
    result.stdout.fnmatch_lines([f"*::{name} PASSED*" for name in tests], consecutive=False)
