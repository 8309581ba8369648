"""Everything generated in the checkout (docs tables, page sections, offered.json) is what the
declarations and recordings make now, and `scripts/regenerate` is the one command that makes it:
see tests/support/generated_docs.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from support import generated_docs
from support.generated_docs import COMMAND, GENERATED, ROOT, Generated, stale


@pytest.mark.parametrize("part", GENERATED, ids=lambda part: f"{part.page.name}:{part.name}")
def test_the_file_holds_what_the_declarations_make(part):
    text = part.page.read_text(encoding="utf-8")
    fresh = part.fresh(text)
    if fresh != text:
        changed = [line for line in fresh.splitlines() if line not in set(text.splitlines())][:20]
        pytest.fail(
            f"{part.page.relative_to(ROOT)} is stale ({part.name}): run {COMMAND}. Lines it would write:\n"
            + "\n".join(changed)
        )


@pytest.fixture
def scratch_page(tmp_path, monkeypatch):
    """A page with one generated section, out of date, standing in for the checkout's parts."""
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n<!-- part:begin -->\nold\n<!-- part:end -->\n\nkept\n", encoding="utf-8")
    monkeypatch.setattr(generated_docs, "ROOT", tmp_path)
    monkeypatch.setattr(generated_docs, "GENERATED", [Generated(page, "part", lambda: "new")])
    return page


def test_check_names_the_stale_file_and_the_command_and_changes_nothing(scratch_page, capsys):
    assert generated_docs.main(["--check"]) == 1
    assert capsys.readouterr().err == "page.md is stale (part): run scripts/regenerate\n"
    assert "old" in scratch_page.read_text(encoding="utf-8")


def test_regenerate_writes_the_part_and_keeps_the_rest(scratch_page, capsys):
    assert generated_docs.main([]) == 0
    assert scratch_page.read_text(encoding="utf-8") == "# Page\n\n<!-- part:begin -->\nnew\n<!-- part:end -->\n\nkept\n"
    assert generated_docs.main(["--check"]) == 0
    assert not stale(generated_docs.GENERATED[0])


def test_a_page_that_lost_its_markers_is_named(scratch_page):
    scratch_page.write_text("# Page\n", encoding="utf-8")
    with pytest.raises(ValueError, match="page.md has lost its part markers"):
        generated_docs.main(["--check"])


def test_the_command_names_that_page_without_a_traceback(scratch_page, capsys):
    scratch_page.write_text("# Page\n", encoding="utf-8")
    assert generated_docs.command(["--check"]) == 1
    assert capsys.readouterr().err.startswith("scripts/regenerate: page.md has lost its part markers")


def test_the_command_runs_from_the_checkout_and_says_how_to_use_it():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "regenerate"), "--nonsense"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "scripts/regenerate --check" in result.stderr
