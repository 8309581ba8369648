"""A new reply-changing option is one module: the example step of docs/development.md ("A
reply-changing option"), added to a scratch copy of the package with nothing else edited, is offered by
`serve --help`, by the pytest plugin and in the options tables once `scripts/regenerate` has run,
and changes the replies of `serve` and of a pytest session, journalled as sent in full."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from support.docs_pages import DOCS, ROOT, blocks

MODULE = "mockllama/server/steps/redact.py"
WORD = "Paris"  # in the recorded answer of text-finishes: "The capital of France is Paris."
ASKED = {"model": "text-finishes", "input": "What is the capital of France? Answer in one sentence."}
# The regenerate command, and what it needs of the checkout.
REGENERATE = (
    "scripts/regenerate",
    "scripts/module_table.py",
    "tests/support/__init__.py",
    "tests/support/generated_docs.py",
)
# What it writes, besides the module written by hand.
REGENERATED = {"mockllama/pytest_plugin/offered.json", "docs/serving.md", "docs/pytest.md", "docs/architecture.md"}


def example_module() -> str:
    """The step module docs/development.md shows, as a contributor would save it."""
    (shown,) = [
        block for block in blocks(DOCS / "development.md") if block.not_run and Path(__file__).name in block.not_run
    ]
    return shown.source


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """A copy of the checkout's package, docs and regenerate scripts, the recordings linked in,
    with the example step's module added and the regenerate command run, as the docs say."""
    tree = tmp_path_factory.mktemp("scratch")
    shutil.copytree(ROOT / "mockllama", tree / "mockllama", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(DOCS, tree / "docs", ignore=shutil.ignore_patterns("images"))
    for file in ("README.md", "pyproject.toml", *REGENERATE):
        (tree / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / file, tree / file)
    for recordings in ("cassettes", "cassettes-patched"):
        (tree / recordings).symlink_to(ROOT / recordings)
    (tree / MODULE).write_text(example_module(), encoding="utf-8")
    run(tree, ["scripts/regenerate"])
    return tree


def scratch_env(tree: Path) -> dict[str, str]:
    """The environment a process in the scratch tree runs with: its copy of the package imported."""
    return {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}


def run(tree: Path, args: list[str], succeeds: bool = True) -> subprocess.CompletedProcess:
    """``python ARGS`` in the scratch tree."""
    result = subprocess.run(
        [sys.executable, *args], cwd=tree, env=scratch_env(tree), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0 or not succeeds, result.stdout + result.stderr
    return result


def changed(tree: Path) -> set[str]:
    """The files of the scratch tree that differ from the checkout's, or that it alone has."""
    found = set()
    for path in tree.rglob("*"):
        relative = path.relative_to(tree)
        if path.is_file() and not path.is_symlink() and relative.parts[0] in ("mockllama", "docs"):
            if not (ROOT / relative).exists() or not filecmp.cmp(path, ROOT / relative, shallow=False):
                found.add(relative.as_posix())
    return found


def test_the_module_is_the_only_file_written_by_hand(scratch):
    assert changed(scratch) - REGENERATED == {MODULE}


def test_its_option_is_in_serve_s_help_the_plugin_s_options_and_the_options_tables(scratch):
    help_text = run(scratch, ["-m", "mockllama", "serve", "--help"]).stdout
    assert "--redact WORD" in help_text and "Write WORD as asterisks" in help_text
    offered = json.loads((scratch / "mockllama/pytest_plugin/offered.json").read_text(encoding="utf-8"))
    assert ["--mockllama-redact", "mockllama_redact"] in [[flag, ini["name"]] for flag, _, ini in offered["options"]]
    serving, plugin = (scratch / "docs/serving.md").read_text(), (scratch / "docs/pytest.md").read_text()
    assert "| `--redact WORD` | `--mockllama-redact`, `mockllama_redact` |  | Write WORD as asterisks" in serving
    assert "| `--mockllama-redact WORD` | `mockllama_redact` |  | Write WORD as asterisks" in plugin
    assert "| `server/steps/redact.py` | ``--redact WORD``" in (scratch / "docs/architecture.md").read_text()


def test_its_parse_refuses_a_bad_value_as_serve_says_a_bad_option(scratch):
    refused = run(scratch, ["-m", "mockllama", "serve", "--redact", " "], succeeds=False)
    assert refused.returncode == 2 and "Invalid value for '--redact': --redact needs a word" in refused.stderr


def _ask(url: str) -> bytes:
    request = urllib.request.Request(f"{url}/v1/responses", json.dumps(ASKED).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as reply:
        return reply.read()


def test_serve_with_the_option_redacts_every_reply_and_journals_it_sent_in_full(scratch):
    args = [sys.executable, "-m", "mockllama", "serve", "--port", "0", "--redact", WORD]
    with subprocess.Popen(args, cwd=scratch, env=scratch_env(scratch), stdout=subprocess.PIPE, text=True) as server:
        try:
            url = server.stdout.readline().strip()
            replies = [_ask(url), _ask(url)]  # the second from the remembered answer
            with urllib.request.urlopen(f"{url}/_mockllama/journal", timeout=30) as journal:
                entries = json.loads(journal.read())["entries"]
        finally:
            server.terminate()
    assert replies[0] == replies[1] and b"is *****." in replies[0] and WORD.encode() not in replies[0]
    assert [(entry["finished"], entry["bytes_sent"]) for entry in entries] == [(True, len(replies[0]))] * 2


SESSION_TEST = f"""
import json, urllib.request

def test_the_reply_is_redacted(mockllama, mockllama_journal):
    asked = urllib.request.Request(mockllama.url + "/v1/responses", {json.dumps(ASKED).encode()!r}, method="POST")
    with urllib.request.urlopen(asked, timeout=30) as reply:
        assert b"is *****." in reply.read()
    assert mockllama_journal.last.finished is True
"""


def test_a_pytest_session_given_the_plugin_s_option_gets_redacted_replies(scratch):
    (scratch / "test_session.py").write_text(SESSION_TEST, encoding="utf-8")
    session = run(
        scratch, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_session.py", "--mockllama-redact", WORD]
    )
    assert "1 passed" in session.stdout
