"""The client tier at the newest versions the registries offer (`MOCKLLAMA_CLIENTS_NEWEST=1`): each
client matrix made again with its clients' newest releases, and where it differs from its page (the
pinned run), the difference written down rather than failed on. From the checkout:

    python tests/support/newest_clients.py     install the newest clients, run the matrices, print the report

The newest clients are installed beside the pinned ones, never over them, in places of the day
under ~/.cache/mockllama/ (or $XDG_CACHE_HOME), older days' removed: the Python clients in
virtualenvs made from the names of the `clients` extras without their pins (clients-newest-DATE/,
clients-llamaindex-newest-DATE/); the TypeScript clients and Claude Code in npm prefixes, each
dependency of their package.json at `@latest` (js-newest-DATE/, claude-code-newest-DATE/). Each
matrix is made by its own code (tests/support/python_clients.py, tests/js/matrix.mjs,
tests/support/claude_code.py) and compared with its page line by line. The pages, package.json
files and lockfiles are left as they are. The report is printed and written to
~/.cache/mockllama/clients-newest.md.
"""

from __future__ import annotations

import datetime
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `support` when this runs as a script

from mockllama.teaching import matrix  # noqa: E402
from support import ROOT, claude_code, python_clients  # noqa: E402

SWITCH = "MOCKLLAMA_CLIENTS_NEWEST"
JS = ROOT / "tests" / "js"
JS_BEGIN, JS_END = "<!-- js-matrix:begin -->", "<!-- js-matrix:end -->"  # as tests/js/matrix.mjs writes them


def switched_on(environ: Mapping[str, str] = os.environ) -> bool:
    """Off unless the switch says 1: CI (.ci/run) unsets it."""
    return environ.get(SWITCH) == "1"


def report_path() -> Path:
    return python_clients.cache_dir() / "clients-newest.md"


class Blocked(Exception):
    """A registry, or the installer, refused an install: the newest run has nothing to compare."""


@dataclass(frozen=True)
class Section:
    """One page's matrix: the versions it was made with and the newest ones (package -> version),
    the page's part, and the same part made with the newest versions, or why it could not be."""

    page: str
    pinned: dict[str, str]
    newest: dict[str, str]
    shown: str
    made: str = ""
    problem: str = ""


def differences(section: Section) -> str:
    """A section of the report: the versions that moved, then how the newest run's part differs
    from the page's, line by line (each table row is a line), or why there is none."""
    moved = [
        f"{name} {section.pinned.get(name, '(not pinned)')} → {version}"
        for name, version in section.newest.items()
        if section.pinned.get(name) != version
    ]
    out = [f"## {section.page}", "", f"Newest: {', '.join(moved) if moved else 'the pinned versions'}.", ""]
    if section.problem:
        return "\n".join([*out, section.problem])
    diff = difflib.unified_diff(
        section.shown.splitlines(), section.made.splitlines(), f"{section.page} (pinned)", "newest", n=0, lineterm=""
    )
    changed = list(diff)
    return "\n".join([*out, "```diff", *changed, "```"] if changed else [*out, "The same as the page."])


def report(sections: list[Section]) -> str:
    return "\n\n".join(["# The client matrices at the newest versions", *map(differences, sections)]) + "\n"


# --- installing beside the pinned clients ------------------------------------------------------


def place(name: str) -> Path:
    """Today's place for ``name``'s newest clients, under the cache; older days' (and their locks) are removed."""
    today = f"{name}-newest-{datetime.date.today().isoformat()}"
    for old in python_clients.cache_dir().glob(f"{name}-newest-*"):
        if old.name in (today, f"{today}.lock"):
            continue
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)
    return python_clients.cache_dir() / today


def unpinned(requirement: str) -> str:
    """A requirement's name, extras kept, its version left to the index: `a[b]==1` is `a[b]`."""
    return re.split(r"[=<>!~;@ ]", requirement, maxsplit=1)[0]


# run in a client's virtualenv: the installed version of each package named
INSTALLED = (
    "import json, sys; from importlib import metadata as m; print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
)


def newest_python(extra: str) -> tuple[Path, dict[str, str]]:
    """A virtualenv of ``extra``'s clients at their newest: its Python, and package -> version."""
    names = [unpinned(pin) for pin in python_clients.pins(extra)]
    try:
        python = python_clients.virtualenv_python(place(extra).name, names)
    except SystemExit as refused:
        raise Blocked(f"blocked: {refused}") from None
    bare = [re.sub(r"\[.*\]", "", name) for name in names]
    found = subprocess.run([str(python), "-c", INSTALLED, *bare], capture_output=True, text=True, check=True)
    return python, json.loads(found.stdout)


def newest_npm(package: Path, name: str, *flags: str) -> tuple[Path, dict[str, str]]:
    """An npm prefix holding each dependency of ``package``'s package.json at @latest: the prefix,
    and package -> version."""
    names = list(json.loads((package / "package.json").read_text())["dependencies"])
    prefix = place(name)
    if not (prefix / ".mockllama-complete").exists():
        shutil.rmtree(prefix, ignore_errors=True)
        prefix.mkdir(parents=True)
        install = ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", *flags]
        result = subprocess.run(
            [*install, *(f"{n}@latest" for n in names)], capture_output=True, text=True, timeout=1800
        )
        if result.returncode != 0:
            raise Blocked(f"blocked: {' '.join(install)} failed:\n\n    {result.stderr.strip()[-2000:]}")
        (prefix / ".mockllama-complete").write_text("")
    versions = {n: json.loads((prefix / "node_modules" / n / "package.json").read_text())["version"] for n in names}
    return prefix, versions


def pinned_versions(extra: str) -> dict[str, str]:
    found = (re.fullmatch(r"([^\[=]+)(?:\[.*\])?==(.+)", pin) for pin in python_clients.pins(extra))
    return {name: version for name, version in (match.groups() for match in found if match)}


def _labelled(extra: str, versions: dict[str, str]) -> dict[str, str]:
    """The versions of the main extra as they are; another extra's named with it (openai is in both)."""
    return {name if extra == "clients" else f"{name} ({extra})": version for name, version in versions.items()}


# --- the three matrices ------------------------------------------------------------------------


def _made(make: Callable[[], str]) -> tuple[str, str]:
    """A matrix made by ``make``, or why it was not: (made, problem)."""
    try:
        return make(), ""
    except (SystemExit, RuntimeError, subprocess.SubprocessError) as failed:
        return "", f"did not run: {failed}"


def python_matrix() -> Section:
    pinned: dict[str, str] = {}
    newest: dict[str, str] = {}
    pythons: dict[str, Path] = {}
    for extra in dict.fromkeys(extra for _, extra in python_clients.CLIENTS):
        pinned |= _labelled(extra, pinned_versions(extra))
        pythons[extra], versions = newest_python(extra)
        newest |= _labelled(extra, versions)

    def make() -> str:
        with python_clients.serving() as url:
            return python_clients.render(python_clients.observe(url, python=pythons.__getitem__))

    shown = python_clients.table_in(python_clients.PAGE.read_text())
    return Section("docs/python-clients.md", pinned, newest, shown, *_made(make))


def js_matrix() -> Section:
    prefix, newest = newest_npm(JS, "js")
    for script in JS.glob("*.mjs"):  # beside the newest node_modules, which their imports then resolve to
        shutil.copy2(script, prefix / script.name)

    def make() -> str:
        with python_clients.serving() as url:
            ran = subprocess.run(
                ["node", str(prefix / "matrix.mjs"), url, "--json"], capture_output=True, text=True, timeout=900
            )
        if ran.returncode != 0:
            raise RuntimeError(f"node tests/js/matrix.mjs failed:\n{ran.stderr[-3000:]}")
        return json.loads(ran.stdout)["markdown"]

    pinned = json.loads((JS / "package.json").read_text())["dependencies"]
    shown = matrix.table_in((ROOT / "docs" / "typescript.md").read_text(), JS_BEGIN, JS_END)
    return Section("docs/typescript.md", pinned, newest, shown, *_made(make))


def claude_code_table() -> Section:
    prefix, newest = newest_npm(claude_code.PACKAGE, "claude-code", "--ignore-scripts")
    version = newest[claude_code.NAME]

    def make() -> str:
        if not claude_code.launcher(prefix).is_file():
            raise RuntimeError(f"{claude_code.NAME} {version} has no {claude_code.launcher(prefix).name}")
        return claude_code.render(claude_code.observe(prefix), version)

    pinned = {claude_code.NAME: claude_code.version()}
    shown = claude_code.table_in(claude_code.PAGE.read_text())
    return Section("docs/claude-code.md", pinned, newest, shown, *_made(make))


MATRICES: tuple[tuple[str, Callable[[], Section]], ...] = (
    ("docs/python-clients.md", python_matrix),
    ("docs/typescript.md", js_matrix),
    ("docs/claude-code.md", claude_code_table),
)


def run() -> list[Section]:
    """Every matrix at the newest versions; one that could not be made says why, and the rest go on."""
    sections = []
    for page, make in MATRICES:
        try:
            sections.append(make())
        except Blocked as refused:
            sections.append(Section(page, {}, {}, "", problem=str(refused)))
    text = report(sections)
    report_path().parent.mkdir(parents=True, exist_ok=True)
    report_path().write_text(text)
    return sections


if __name__ == "__main__":
    print(report(run()), end="")
    print(f"written to {report_path()}", file=sys.stderr)
