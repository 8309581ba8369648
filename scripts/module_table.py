"""The table of every module of the package on docs/architecture.md, made from the modules' docstrings.

    python scripts/module_table.py            print the table
    python scripts/module_table.py --write    put it in docs/architecture.md, in place of the one there

Each row is a module: its layer (the position of its top-level package in the layers contract of
pyproject.toml, 1 at the top; ``-`` for the package itself and ``__main__``), its path under
``mockllama/``, and the first sentence of its docstring. ``scripts/regenerate`` writes it with the
docs' other generated parts, and tests/docs/test_generated_docs.py holds the page to it.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mockllama"
PAGE = ROOT / "docs" / "architecture.md"
HEAD = "| layer | module | what it is |"


def layers(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, int]:
    """Each top-level package or module of the layers contract, by its layer's number from the top."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    contract = next(c for c in config if c["type"] == "layers")
    return {
        name.strip(): number
        for number, layer in enumerate(contract["layers"], start=1)
        for name in re.split(r"[|:]", layer)
    }


def summary(path: Path) -> str:
    """The first sentence of the module's docstring, on one line; an error when it has none."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not docstring:
        raise ValueError(f"{path.parent.name}/{path.name} has no docstring: give it one that says what it is")
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    sentence = re.match(r"(.+?[.?!])(?:\s|$)", paragraph)
    return (sentence.group(1) if sentence else paragraph).replace("|", "\\|")


def rows(package: Path = PACKAGE) -> list[tuple[str, str, str]]:
    """(layer, module, what it is) for every module, top layer first, then by path."""
    numbers = layers()
    found = []
    for path in package.rglob("*.py"):
        relative = path.relative_to(package)
        top = relative.parts[0].removesuffix(".py")
        layer = numbers.get(top, 0)
        name = f"{relative.parent.as_posix()}/" if relative.name == "__init__.py" else relative.as_posix()
        name = "mockllama" if name == "./" else name
        found.append((layer, relative.parent.as_posix(), relative.name != "__init__.py", name, summary(path)))
    found.sort()
    return [(str(layer) if layer else "-", f"`{name}`", text) for layer, _, _, name, text in found]


def table() -> str:
    lines = [HEAD, "| --- | --- | --- |"]
    lines += [f"| {layer} | {module} | {text} |" for layer, module, text in rows()]
    return "\n".join(lines)


def page_table(text: str) -> str:
    """The module table as the page has it: from its head to the first blank line."""
    start = text.index(HEAD)
    end = text.find("\n\n", start)
    return text[start : end if end != -1 else len(text)].rstrip("\n")


def main(argv: list[str]) -> None:
    if argv not in ([], ["--write"]):
        sys.exit(__doc__.split("\n\n")[1])
    try:
        fresh = table()
    except ValueError as err:
        sys.exit(f"scripts/module_table.py: {err}")
    if not argv:
        print(fresh)
        return
    text = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(text.replace(page_table(text), fresh), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
