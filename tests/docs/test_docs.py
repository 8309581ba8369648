"""The documentation builds, and holds together: the strict mkdocs build (nav, links and anchors,
as mkdocs.yml's `validation:` makes them errors), README.md's links into docs/, its length, and
every code block either run by tests/docs/test_docs_examples.py or saying why not."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mockllama
from support.docs_pages import DOCS, README, ROOT, all_blocks, blocks, pages

IMPORT_ROOT = str(Path(mockllama.__file__).resolve().parents[1])


def build(site: Path, config: Path = ROOT / "mkdocs.yml") -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",  # Material's notice about MkDocs 2.0, not a warning of ours
        "PYTHONPATH": os.pathsep.join(filter(None, [IMPORT_ROOT, os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built as `mkdocs build --strict` builds it."""
    site = tmp_path_factory.mktemp("site")
    result = build(site)
    assert result.returncode == 0, result.stdout + result.stderr
    return site


def test_the_strict_build_passes_and_has_every_page(site):
    built = {path.parent.relative_to(site).as_posix() for path in site.rglob("index.html")}
    for page in DOCS.glob("*.md"):
        assert ("." if page.stem == "index" else page.stem) in built, page.name


def test_the_command_line_reference_is_the_commands_own_help(site):
    reference = (site / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("serve", "scenarios", "record", "check", "explain"):
        assert f'id="mockllama-{command}"' in reference, command
    assert "--max-reply-bytes" in reference and "--cors-origin" in reference


# The modules whose __all__ is mockllama's Python API (docs/api.md).
PUBLIC_MODULES = ("mockllama.app", "mockllama.check", "mockllama.pytest_plugin")


def test_the_api_page_renders_every_public_name_from_its_docstring(site):
    page = (site / "api" / "index.html").read_text(encoding="utf-8")
    for module in PUBLIC_MODULES:
        for name in importlib.import_module(module).__all__:
            assert f'id="{module}.{name}"' in page, f"docs/api.md does not render {module}.{name}"
    assert "Raises:" in page and "Example" in page  # the docstrings' sections, rendered as sections


def test_a_broken_anchor_fails_the_strict_build(tmp_path):
    """A copy of the docs with one link to an anchor that does not exist must not build."""
    copy = tmp_path / "docs"
    copy.mkdir()
    for page in DOCS.glob("*.md"):
        (copy / page.name).write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    index = copy / "index.md"
    index.write_text(
        index.read_text(encoding="utf-8") + "\nSee [the journal](journal.md#no-such-section).\n", encoding="utf-8"
    )
    config = tmp_path / "mkdocs.yml"
    config.write_text((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), encoding="utf-8")
    result = build(tmp_path / "site", config)
    assert result.returncode != 0
    assert "no-such-section" in result.stdout + result.stderr


def test_the_readme_reads_in_five_minutes():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def test_the_performance_page_gives_the_latest_run_not_a_history():
    """The method, how to run it, the latest tables and what bounds them; git keeps the earlier runs."""
    assert len((DOCS / "performance.md").read_text(encoding="utf-8").splitlines()) <= 150


def test_the_readme_links_reach_pages_and_anchors_that_exist(site):
    links = re.findall(r"\]\(([^)#\s]+)(?:#([^)\s]+))?\)", README.read_text(encoding="utf-8"))
    local = [(target, anchor) for target, anchor in links if "://" not in target]
    assert len(local) >= 10
    for target, anchor in local:
        assert (ROOT / target).exists(), target
        if anchor:
            assert target.startswith("docs/") and target.endswith(".md"), target
            page = Path(target).relative_to("docs").with_suffix("")
            html = site / ("" if page.name == "index" else page) / "index.html"
            assert f'id="{anchor}"' in html.read_text(encoding="utf-8"), f"{target}#{anchor}"


def test_every_code_block_is_run_or_says_why_not():
    for block in all_blocks():
        if block.not_run is not None:
            assert block.not_run, f"{block.where}: say why it is not run"
            for named in re.findall(r"tests/[\w/]+\.py", block.not_run):
                assert (ROOT / named).exists(), f"{block.where} names {named}, which does not exist"
        elif block.include is not None:
            assert (ROOT / block.include).is_file(), f"{block.where} shows {block.include}, which does not exist"
        elif block.title:
            runs = [
                later
                for later in blocks(block.page)
                if later.language == "console" and later.line > block.line and block.title in later.source
            ]
            assert runs, f"{block.where}: a console block after it must run {block.title}"
        else:
            assert block.language in ("python", "console", "json"), (
                f"{block.where}: a {block.language or 'plain'} block is not run: make it a console block, "
                f"or say why not in a <!-- not run: ... --> comment right before it"
            )


def test_every_python_example_says_what_it_prints():
    for block in all_blocks():
        if block.language == "python" and block.not_run is None and not block.title:
            assert block.source.rstrip().splitlines()[-1].startswith("# "), (
                f"{block.where}: end it with the lines it prints, as # comments"
            )


def test_every_page_has_examples_to_run():
    """The parser finds the blocks: no page silently loses its examples to a fence it misreads."""
    counted = {page.relative_to(ROOT).as_posix(): len(blocks(page)) for page in pages()}
    assert counted["README.md"] >= 8 and counted["docs/journal.md"] >= 3 and counted["docs/check.md"] >= 2, counted
    # docs/api.md's, in the docstrings
    assert counted["mockllama/app.py"] >= 1 and counted["mockllama/check/__init__.py"] >= 1, counted
