"""The documentation's pages, README.md and docs/*.md, and the code blocks in them; with them,
the docstrings docs/api.md renders (``::: mockllama.check.run``), whose examples are that page's.

Sybil parses each page: its Markdown lexers find the fenced code blocks, with the language and an
optional ``title="..."`` on the opening fence, and the ``<!-- not run: WHY -->`` comment that may
stand right before a block. tests/docs/test_docs_examples.py runs the blocks, and tests/docs/test_docs.py
checks that every block is either run or says why not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from sybil import Document, Region, Sybil
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer, RawFencedCodeBlockLexer

from support import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
API_PAGE = DOCS / "api.md"

# The opening fence's info line: a language, then optionally title="FILE" (Material shows it).
INFO = re.compile(r'(?P<language>[\w-]*)(?:[ \t]+title="(?P<title>[^"]+)")?[ \t]*$\n', re.MULTILINE)
FENCES = RawFencedCodeBlockLexer(
    info_pattern=INFO, mapping={"language": "language", "title": "title", "source": "source"}
)
NOT_RUN = DirectiveInHTMLCommentLexer(directive="not run", arguments=".+?")
# <!-- include: tests/js/FILE -->: the block is that file as it is, which its own tests run
# (tests/clients/test_js_clients.py holds the two equal).
INCLUDE = DirectiveInHTMLCommentLexer(directive="include", arguments=".+?")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int  # the line of the opening fence
    language: str  # "" when the fence names none
    title: str | None  # title="..." on the fence: the file name the block is shown as
    source: str
    not_run: str | None  # the reason given by a <!-- not run: ... --> right before the fence
    include: str | None = None  # the file a <!-- include: PATH --> right before the fence shows

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def api_sources() -> list[Path]:
    """The source files of the objects docs/api.md renders from their docstrings (mkdocstrings'
    ``::: dotted.path`` lines): the module that holds each, found by path, not imported."""
    found = set()
    for dotted in re.findall(r"^::: ([\w.]+)$", API_PAGE.read_text(encoding="utf-8"), re.MULTILINE):
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            module = ROOT.joinpath(*parts[:end])
            source = module / "__init__.py" if module.is_dir() else module.with_suffix(".py")
            if source.is_file():
                found.add(source)
                break
        else:
            raise AssertionError(f"docs/api.md renders {dotted}, which is in no module of the checkout")
    return sorted(found)


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md")), *api_sources()]


def _parse_blocks(document: Document):
    """A Sybil parser: one region per fenced block, its parsed value a Block."""
    # each note with the position just past its closing "-->"
    notes = [(n, document.text.index("-->", n.start) + 3) for n in NOT_RUN(document)]
    includes = [(n, document.text.index("-->", n.start) + 3) for n in INCLUDE(document)]

    def right_before(found, region):
        note = next(
            (n for n, end in found if end <= region.start and not document.text[end : region.start].strip()), None
        )
        return note.lexemes["arguments"].strip() if note else None

    for region in FENCES(document):
        line = document.text.count("\n", 0, region.start) + 1
        region.parsed = Block(
            Path(document.path),
            line,
            region.lexemes["language"] or "",
            region.lexemes["title"],
            str(region.lexemes["source"]),
            right_before(notes, region),
            right_before(includes, region),
        )
        yield Region(region.start, region.end, region.parsed)


@cache
def blocks(page: Path) -> tuple[Block, ...]:
    """The page's blocks; in a Python file (parsed docstring by docstring), each block's line is
    the file's."""
    document = Sybil([_parse_blocks]).parse(page)
    return tuple(replace(example.parsed, line=example.line) for example in document)


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def section(page: Path, heading: str) -> str:
    """The text of a page from ``heading`` (a whole heading line) to the next heading of its level or
    above; lines inside fenced code blocks are never headings."""
    lines = page.read_text(encoding="utf-8").split("\n")
    start = lines.index(heading)
    level = len(heading.split(" ")[0])
    fenced = False
    for number in range(start + 1, len(lines)):
        line = lines[number]
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.match(rf"#{{1,{level}}} ", line):
            return "\n".join(lines[start:number]) + "\n"
    return "\n".join(lines[start:])
