"""How scripts/module_table.py makes docs/architecture.md's table of every module (each by its
docstring's first sentence; tests/docs/test_generated_docs.py holds the page to it), and the page's
layers table follows pyproject.toml's layers."""

from __future__ import annotations

import importlib.util
import re

import pytest

from support.docs_pages import DOCS, ROOT

PAGE = DOCS / "architecture.md"


def _load_script():
    spec = importlib.util.spec_from_file_location("module_table", ROOT / "scripts" / "module_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


module_table = _load_script()


def test_the_layers_table_names_the_packages_of_each_layer_of_the_contract():
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("| layer | packages |") :].split("\n\n")[0].splitlines()[2:]
    on_page = [re.findall(r"`(\w+)/?`", row.split(" | ")[1]) for row in table]
    by_layer: dict[int, list[str]] = {}
    for name, number in module_table.layers().items():
        by_layer.setdefault(number, []).append(name)
    assert on_page == [by_layer[number] for number in sorted(by_layer)]


def test_a_row_is_the_first_sentence_with_the_layer_of_its_package(tmp_path):
    package = tmp_path / "mockllama"
    (package / "server").mkdir(parents=True)
    (package / "__init__.py").write_text('"""The package."""\n')
    (package / "server" / "__init__.py").write_text('"""The server: more.\n\nDetails."""\n')
    (package / "server" / "cors.py").write_text('"""CORS as llama-server answers it.  Then more."""\n')
    (package / "cli.py").write_text('"""A | B, in one line\nwrapped."""\n')
    layer = str(module_table.layers()["server"])
    assert module_table.rows(package) == [
        ("-", "`mockllama`", "The package."),
        ("1", "`cli.py`", "A \\| B, in one line wrapped."),
        (layer, "`server/`", "The server: more."),
        (layer, "`server/cors.py`", "CORS as llama-server answers it."),
    ]


def test_a_module_without_a_docstring_is_refused_by_name(tmp_path):
    package = tmp_path / "mockllama"
    package.mkdir()
    (package / "__init__.py").write_text("x = 1\n")
    with pytest.raises(ValueError, match="__init__.py has no docstring"):
        module_table.rows(package)
