"""Everything in the checkout that is made from the code's declarations or from the recordings,
and the one command that makes it all again:

    scripts/regenerate            write every fast part (seconds, offline)
    scripts/regenerate --check    list the stale files and the command to run; exit 1 if any
    scripts/regenerate --slow     also the client matrices, which run real clients (minutes)

A fast part is either a section of a page between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``
(``Generated``), a table found by its head (the module table, the scenario tables), or a whole
file (mockllama/pytest_plugin/offered.json, what the pytest plugin reads as it loads).
tests/docs/test_generated_docs.py holds every fast part equal to a fresh one and names the stale
file. The slow parts (``SLOW``) are held by their own tests in the client tier.

A new generated part is one more entry in ``GENERATED``.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mockllama.app import ServeOptions
from mockllama.behaviours.registry import BEHAVIOURS, markdown_list
from mockllama.behaviours.variants import REPLIES as VARIANT_REPLIES
from mockllama.behaviours.variants import chat_markdown_table as chat_variants_table
from mockllama.behaviours.variants import markdown_table as variants_table
from mockllama.matching.equivalences import markdown_table as equivalences_table
from mockllama.pytest_plugin.session import OFFERED_FILE, base_url_behaviours, offered_json
from mockllama.server.faults import markdown_table as faults_table
from mockllama.server.options import options_table, plugin_table

ROOT = Path(__file__).resolve().parents[2]  # the checkout (no import of support: this also runs as a script)
DOCS = ROOT / "docs"
COMMAND = "scripts/regenerate"


@dataclass(frozen=True)
class Generated:
    """A section of ``page`` between its two markers, made by ``make``."""

    page: Path
    name: str  # of its markers
    make: Callable[[], str]

    @property
    def markers(self) -> tuple[str, str]:
        return f"<!-- {self.name}:begin -->", f"<!-- {self.name}:end -->"

    def on_page(self) -> str:
        begin, end = self.markers
        text = self.page.read_text(encoding="utf-8")
        return text[text.index(begin) + len(begin) : text.index(end)].strip("\n")

    def fresh(self, text: str) -> str:
        """``text``, the page, with this section made anew."""
        begin, end = self.markers
        if begin not in text or end not in text:
            page = self.page.relative_to(ROOT)
            raise ValueError(f"{page} has lost its {self.name} markers: put {begin} and {end} back")
        pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.DOTALL)
        return pattern.sub(lambda _: f"{begin}\n{self.make()}\n{end}", text)


@dataclass(frozen=True)
class Rewritten:
    """Parts of ``page`` found by their own content, made anew by ``rewrite`` (the page's text -> the
    page's text): the tables whose rows carry a hand-written column, or whose head marks them."""

    page: Path
    name: str
    rewrite: Callable[[str], str]

    def fresh(self, text: str) -> str:
        return self.rewrite(text)


@dataclass(frozen=True)
class WholeFile:
    """A file that is all generated."""

    page: Path
    name: str
    make: Callable[[], str]

    def fresh(self, text: str) -> str:
        return self.make()


Part = Generated | Rewritten | WholeFile


def stale(part: Part) -> bool:
    text = part.page.read_text(encoding="utf-8")
    return part.fresh(text) != text


def write(part: Part) -> bool:
    """Make ``part`` anew in its file; whether that changed the file."""
    text = part.page.read_text(encoding="utf-8")
    fresh = part.fresh(text)
    if fresh != text:
        part.page.write_text(fresh, encoding="utf-8")
    return fresh != text


def readme_behaviours() -> str:
    """README's list, kept short: the behaviours that are no server's variant, then the variants in one line."""
    variants = ", ".join(f"**{name}**" for name in BEHAVIOURS if name in VARIANT_REPLIES)
    line = f"- {variants}: other servers' truncation signals on the same recordings ([the variants](docs/variants.md))."
    return markdown_list(base_url_behaviours()).removesuffix(".") + ";\n" + line


def sweeps_table() -> str:
    """The bundled sweeps, from the recordings themselves (stock and patched) and the catalogues' notes."""
    from mockllama.recordings.cassettes import RECORDING_SETS, load_scenarios
    from mockllama.recordings.catalogue import BUNDLED_CATALOGUES, load_catalogue

    notes = {entry.name: entry.note for name in BUNDLED_CATALOGUES for entry in load_catalogue(name) if entry.sweep}
    found: dict[str, dict[str, list]] = {}
    for recordings in RECORDING_SETS:
        for scenario in load_scenarios([RECORDING_SETS[recordings]()]).values():
            if scenario.sweep is not None:
                found.setdefault(scenario.sweep, {}).setdefault(recordings, []).append(scenario)
    head = "| sweep | endpoint | set-up | positions | the server says cut | recorded | what it is |"
    rows = [head, "| --- " * 7 + "|"]
    for name in sorted(found, key=lambda sweep: list(notes).index(sweep) if sweep in notes else len(notes)):
        sets = found[name]
        positions = sorted(sets["stock"], key=lambda scenario: scenario.limit or 0)
        cut = [scenario.limit for scenario in positions if scenario.stopped_by_limit()]
        span = f"{cut[0]}-{cut[-1]}" if cut else "none"
        endpoint = positions[0].endpoints[0]
        rows.append(
            f"| `{name}` | `{endpoint}` | {positions[0].setup} | {positions[0].limit}-{positions[-1].limit} "
            f"| {span} | {', '.join(sorted(sets))} | {notes.get(name) or ''} |"
        )
    return "\n".join(rows)


def _module_table():
    """scripts/module_table.py, which runs as a script too."""
    spec = importlib.util.spec_from_file_location("module_table", ROOT / "scripts" / "module_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def module_table(text: str) -> str:
    table = _module_table()
    return text.replace(table.page_table(text), table.table(), 1)


SCENARIOS_HEAD = "| scenario | limit | buggy status | fixed status | chat twin `finish_reason` | what it shows |"


@functools.cache
def recorded_scenarios() -> dict[str, dict]:
    """What `mockllama scenarios --json` prints of the bundled recordings: one row per scenario, a
    sweep as one row."""
    from mockllama.commands.scenarios import bundled_rows

    return {row["name"]: row for row in bundled_rows()}


def scenario_tables(text: str) -> list[list[str]]:
    """The rows of each scenario table on a page (head and rule left out)."""
    found = []
    for start in (m.end() for m in re.finditer(re.escape(SCENARIOS_HEAD) + r"\n\| --- .*\n", text)):
        found.append(text[start:].split("\n\n")[0].splitlines())
    return found


def scenario_names(row: str) -> list[str]:
    return re.findall(r"`([^`]+)`", row.split(" | ")[0])


def scenario_row(row: str, recorded: dict[str, dict]) -> str:
    """The row again, its columns from the recordings, its "what it shows" (written by hand) from the page."""
    shows = row.removesuffix(" |").rsplit(" | ", 1)[-1]
    group = [recorded[name] for name in scenario_names(row)]
    if all(s["twin_finish_reason"] for s in group):  # Responses scenarios with a chat twin
        columns = [", ".join(str(s["limit"]) for s in group)]
        for field in ("responses_status", "fixed_status", "twin_finish_reason"):
            values = {s[field] for s in group}
            columns.append(values.pop() if len(values) == 1 else f"differ: {sorted(values)}")
    else:  # chat-only, /v1/messages, GET routes and recorded errors: replayed as they came
        columns = ["", "", "", ""]
    scenario = ", ".join(f"`{s['name']}`" for s in group)
    return "|" + "|".join(f" {cell} " if cell else " " for cell in [scenario, *columns, shows]) + "|"


def rewrite_scenario_tables(text: str) -> str:
    recorded = recorded_scenarios()
    lines = text.split("\n")
    rows = {row for table in scenario_tables(text) for row in table}
    return "\n".join(scenario_row(line, recorded) if line in rows else line for line in lines)


GENERATED: list[Part] = [
    Generated(DOCS / "serving.md", "options", lambda: options_table(ServeOptions)),
    Generated(DOCS / "pytest.md", "plugin-options", lambda: plugin_table(ServeOptions)),
    Generated(DOCS / "behaviours.md", "behaviours", markdown_list),
    Generated(DOCS / "index.md", "behaviours", markdown_list),
    Generated(ROOT / "README.md", "behaviours", readme_behaviours),
    Generated(DOCS / "variants.md", "variants", variants_table),
    Generated(DOCS / "variants.md", "chat-variants", chat_variants_table),
    Generated(DOCS / "sweeps.md", "sweeps", sweeps_table),
    Generated(DOCS / "matching.md", "equivalences", equivalences_table),
    Rewritten(DOCS / "architecture.md", "module table", module_table),
    Rewritten(DOCS / "scenarios.md", "scenario tables", rewrite_scenario_tables),
    Rewritten(ROOT / "README.md", "scenario tables", rewrite_scenario_tables),
    WholeFile(OFFERED_FILE, "the plugin's options", offered_json),
    Generated(DOCS / "faults.md", "fault-kinds", faults_table),
]


@dataclass(frozen=True)
class Slow:
    """A part made by running real clients: minutes, so in its own tier (``--slow`` here)."""

    page: str
    what: str
    command: tuple[str, ...]  # URL stands for a running `mockllama serve`'s
    test: str  # what holds it

    @property
    def needs_server(self) -> bool:
        return "URL" in self.command


SLOW = [
    Slow(
        "docs/behaviours.md",
        "what the openai SDK makes of each behaviour",
        ("python", "-m", "mockllama.teaching.matrix", "--write", "docs/behaviours.md"),
        "tests/teaching/test_matrix.py",
    ),
    Slow(
        "docs/faults.md",
        "what the openai SDK does under each fault",
        ("python", "-m", "mockllama.teaching.fault_matrix", "--write", "docs/faults.md"),
        "tests/teaching/test_fault_matrix.py",
    ),
    Slow(
        "docs/python-clients.md",
        "the Python client matrix",
        ("python", "tests/support/python_clients.py", "--write", "docs/python-clients.md"),
        "tests/clients/test_python_clients.py",
    ),
    Slow(
        "docs/python-clients.md",
        "where each Python client breaks along a sweep",
        ("python", "tests/support/python_client_sweep.py", "--write"),
        "tests/clients/test_python_clients.py",
    ),
    Slow(
        "docs/typescript.md",
        "the TypeScript client matrix",
        ("node", "tests/js/matrix.mjs", "URL", "--write", "docs/typescript.md"),
        "tests/clients/test_js_clients.py",
    ),
    Slow(
        "docs/typescript.md",
        "where each TypeScript client breaks along a sweep",
        ("node", "tests/js/sweep.mjs", "URL", "--write", "docs/typescript.md"),
        "tests/clients/test_js_clients.py",
    ),
]


def run_slow(parts: list[Slow]) -> None:
    import subprocess

    sys.path.insert(0, str(ROOT / "tests"))
    from support.python_clients import serving

    with serving() as url:
        for part in parts:
            command = [sys.executable if word == "python" else url if word == "URL" else word for word in part.command]
            print(f"{COMMAND}: {part.what} ({' '.join(part.command)})", file=sys.stderr)
            subprocess.run(command, cwd=ROOT, check=True)


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"], ["--slow"]):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if argv == ["--check"]:
        behind = [part for part in GENERATED if stale(part)]
        for part in behind:
            print(f"{part.page.relative_to(ROOT)} is stale ({part.name}): run {COMMAND}", file=sys.stderr)
        return 1 if behind else 0
    for part in GENERATED:
        if write(part):
            print(f"{COMMAND}: wrote {part.name} into {part.page.relative_to(ROOT)}", file=sys.stderr)
    if argv == ["--slow"]:
        run_slow(SLOW)
    return 0


def command(argv: list[str]) -> int:
    """``main`` as a command: a page it cannot make its part in is named, not a traceback."""
    try:
        return main(argv)
    except ValueError as err:
        print(f"{COMMAND}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(command(sys.argv[1:]))
