"""The Python client matrix of docs/python-clients.md: each client, unmodified and unselected, against
`mockllama serve`, in every behaviour it serves: llama-server's own, the honest ones and each other
server's variant. From the checkout, with the `clients` extra installed:

    python tests/support/python_clients.py                                  print the matrix
    python tests/support/python_clients.py --write docs/python-clients.md   replace it on the page

Each client's calls are in tests/pyclients/calls/, run by tests/pyclients/harness.py in a process of
their own: llama-index in a virtualenv of its own (its OpenAI integration needs openai<3, which
openai-agents and pydantic-ai refuse), made here from the `clients-llamaindex` extra's pins and kept
under ~/.cache/mockllama/ (or $XDG_CACHE_HOME) by their hash. tests/clients/test_python_clients.py
makes the table afresh and compares it with the page.

The page shows, for each client, a table of server × call with what the call made of each kind of
cut reply, in the few words of tests/support/client_outcomes.py's classes, and which servers fool
each call; then the detailed table, one row per call, kind and outcome.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import venv
from collections.abc import Iterator
from functools import cache
from itertools import groupby
from pathlib import Path

from mockllama.behaviours.variants import REPLIES, own_behaviours
from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios
from mockllama.teaching import matrix

ROOT = Path(__file__).resolve().parents[2]  # the checkout
sys.path.insert(0, str(ROOT / "tests"))  # for `support` when this runs as a script

from support.client_outcomes import OUTCOMES, OutcomeClass, Recorded, classify, recorded  # noqa: E402

HARNESS = ROOT / "tests" / "pyclients" / "harness.py"
PAGE = ROOT / "docs" / "python-clients.md"
BEGIN, END = "<!-- python-clients:begin -->", "<!-- python-clients:end -->"
# (module in tests/pyclients/calls, the extra whose virtualenv runs it), in the page's order
CLIENTS = (
    ("openai_sdk", "clients"),
    ("openai_agents", "clients"),
    ("langchain", "clients"),
    ("litellm_calls", "clients"),
    ("pydantic_ai_calls", "clients"),
    ("llama_index_calls", "clients-llamaindex"),
    ("haystack_calls", "clients"),
    ("anthropic_sdk", "clients"),
)
COLUMNS = ("call", "kind", "reaches", "behaviours", "what it says", "stream", "the tool call")
WRITE = "python tests/support/python_clients.py --write docs/python-clients.md"


def pins(extra: str) -> list[str]:
    """The requirements of one optional extra in pyproject.toml, as written there."""
    text = (ROOT / "pyproject.toml").read_text()
    found = re.search(rf"^{re.escape(extra)} = \[(.*?)^\]", text, re.MULTILINE | re.DOTALL)
    if found is None:
        raise SystemExit(f"pyproject.toml has no extra {extra!r}")
    return re.findall(r'^\s*"([^"]+)"', found.group(1), re.MULTILINE)


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mockllama"


def virtualenv_python(name: str, requirements: list[str]) -> Path:
    """The Python of a virtualenv holding ``requirements`` alone, made once under the cache as
    ``name`` and kept; a half-made one (no marker) is made again."""
    home = cache_dir() / name
    python, done = home / "bin" / "python", home / ".mockllama-complete"
    home.parent.mkdir(parents=True, exist_ok=True)
    with (home.parent / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run making the same one waits, then reuses it
        if not done.exists():
            shutil.rmtree(home, ignore_errors=True)
            venv.create(home, with_pip=True)
            install = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements]
            result = subprocess.run(install, capture_output=True, text=True, timeout=1800)
            if result.returncode != 0:
                raise SystemExit(f"pip could not install {' '.join(requirements)}:\n{result.stderr[-3000:]}")
            done.write_text("\n".join(requirements) + "\n")
    return python


def extra_python(extra: str) -> Path:
    """The Python of a virtualenv holding ``extra``'s pins alone, one per set of pins and Python version."""
    wanted = pins(extra)
    key = hashlib.sha256(json.dumps([sys.version_info[:2], wanted]).encode()).hexdigest()[:16]
    return virtualenv_python(f"{extra}-{key}", wanted)


def python_for(extra: str) -> Path:
    return Path(sys.executable) if extra == "clients" else extra_python(extra)


@contextlib.contextmanager
def serving() -> Iterator[str]:
    """`mockllama serve --port 0`, this Python's: its URL, then it is stopped."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mockllama", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = process.stdout.readline().strip()
        if not url.startswith("http://"):
            raise SystemExit(f"mockllama serve did not start: its first line is {url!r}")
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


def harness_lines(module: str, python: Path, url: str, arguments: list[str]) -> list[dict]:
    """One client's lines from tests/pyclients/harness.py, run once in ``python``, that client's."""
    result = subprocess.run(
        [str(python), str(HARNESS), module, url, *arguments],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    if result.returncode != 0:
        raise SystemExit(f"the {module} calls failed:\n{result.stderr[-4000:]}")
    return [json.loads(line) for line in result.stdout.splitlines()]


def servers() -> list[str]:
    """Every behaviour `mockllama serve` serves at /NAME/v1, in the teaching page's order (from which
    tests/js/matrix.mjs reads them): llama-server's own (buggy), the honest ones, then each other
    server's variant."""
    return [*own_behaviours(), *REPLIES]


def observe(url: str, clients=CLIENTS, python=python_for) -> list[dict]:
    """Every client's lines: first its header (versions, what to check), then one per call, kind and
    behaviour. ``python`` gives the Python that runs an extra's clients: the pinned ones' by default."""
    lines = []
    for module, extra in clients:
        lines += harness_lines(module, python(extra), url, servers())
    return lines


def reaches(reached: list) -> str:
    """The recordings a call's requests reached, in order: repeats counted, a miss said plainly."""
    if not reached:
        return "no request sent"
    said = []
    for status, scenario, _ in reached:
        if scenario is None:
            said.append(f"none ({status})")
        else:
            said.append(f"`{scenario}`" + ("" if status == 200 else f" ({status})"))
    return ", then ".join(item if count == 1 else f"{item} ×{count}" for item, count in _runs(said))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def named(chosen: list[str], noun: str = "behaviour") -> str:
    """Some of the behaviours, as the page names them: every one, every one but a few, or each."""
    every = servers()
    if sorted(chosen) == sorted(every):
        return f"every {noun}"
    others = [behaviour for behaviour in every if behaviour not in chosen]
    return f"every {noun} but {', '.join(others)}" if len(others) < len(chosen) else ", ".join(chosen)


def rows(lines: list[dict]) -> dict[str, list[list[str]]]:
    """Per client, the table's rows: one per call, kind and set of behaviours that did the same."""
    grouped: dict[str, dict[tuple, dict[tuple, list[str]]]] = {}
    for line in lines:
        if "call" not in line:
            continue
        outcome = (reaches(line["reached"]), line["says"], line["stream"], line["tool"])
        by_call = grouped.setdefault(line["client"], {}).setdefault((line["call"], line["kind"]), {})
        by_call.setdefault(outcome, []).append(line["behaviour"])
    table = {}
    for client, calls in grouped.items():
        table[client] = []
        for (call, kind), outcomes in calls.items():
            for outcome, chosen in outcomes.items():
                reached, says, stream, tool = outcome
                table[client].append([call, kind, reached, named(chosen), says, stream, tool])
    return table


@cache
def _scenarios() -> dict:
    """The bundled recordings, by scenario name: the ones `mockllama serve` serves."""
    return load_scenarios([bundled_cassette_dir()])


def judged(line: dict) -> tuple[OutcomeClass, Recorded] | None:
    """What a call made of the reply its first request reached, and what that reply held; None where
    no recording answered (nothing was served to judge)."""
    status, scenario, _ = line["reached"][0] if line["reached"] else (None, None, None)
    if status != 200:
        return None
    reply = recorded(_scenarios()[scenario])
    return classify(line, reply), reply


def _words(line: dict, outcome: OutcomeClass) -> str:
    """A call's outcome in a cell's few words, a harm in bold; where the raise is the outcome (it
    said cut, or nothing else), what was raised."""
    raised = re.match(r"raises (\w+)", line["says"])
    words = outcome.short
    if raised and outcome.name == "raised":
        words = f"raises {raised.group(1)}"
    elif raised and outcome.name == "noticed the cut":
        words = f"{words}: raises {raised.group(1)}"
    return f"**{words}**" if outcome.harm else words


def verdict(lines: list[dict]) -> str:
    """One call on one server, from its lines (one a kind of request): what it made of each kind of
    reply, those it made the same of together. A finished reply read as it should be goes unsaid."""
    by_words: dict[str, list[str]] = {}
    for line in lines:
        found = judged(line)
        if found is None or found[0].name == "finished":
            continue
        kinds = by_words.setdefault(_words(line, found[0]), [])
        if found[1].kind not in kinds:
            kinds.append(found[1].kind)
    if len(by_words) <= 1:
        return next(iter(by_words), "reads it")
    return "; ".join(f"{words} ({', '.join(kinds)})" for words, kinds in by_words.items())


def fooled(lines: list[dict]) -> bool:
    """Whether any of a call's lines shows a harm: a cut call run or repaired, a cut taken whole."""
    return any(found[0].harm for found in map(judged, lines) if found is not None)


def by_server(lines: list[dict]) -> dict[str, dict[str, dict[str, list[dict]]]]:
    """client -> call -> behaviour -> its lines, in the order they ran."""
    found: dict[str, dict[str, dict[str, list[dict]]]] = {}
    for line in lines:
        if "call" in line:
            found.setdefault(line["client"], {}).setdefault(line["call"], {}).setdefault(line["behaviour"], []).append(
                line
            )
    return found


def overview(calls: dict[str, dict[str, dict[str, list[dict]]]]) -> list[str]:
    """Server × client: how many of each client's calls the server fools."""
    clients = list(calls)
    out = ["| server | " + " | ".join(clients) + " |", "|" + " --- |" * (len(clients) + 1)]
    for server in servers():
        counts = []
        for client in clients:
            fooling = sum(fooled(by[server]) for by in calls[client].values())
            counts.append(f"{'**' if fooling else ''}{fooling} of {len(calls[client])}{'**' if fooling else ''}")
        out.append(f"| {server} | " + " | ".join(counts) + " |")
    return out


def per_server(calls: dict[str, dict[str, list[dict]]]) -> list[str]:
    """One client's server × call table, then which servers fool each call."""
    out = ["| server | " + " | ".join(_cell(call) for call in calls) + " |", "|" + " --- |" * (len(calls) + 1)]
    for server in servers():
        out.append(f"| {server} | " + " | ".join(_cell(verdict(by[server])) for by in calls.values()) + " |")
    out.append("")
    for call, by in calls.items():
        fooling = [server for server in servers() if fooled(by[server])]
        out.append(f"- {call}: fooled by {named(fooling, 'server') if fooling else 'no server'}.")
    return out


def render(lines: list[dict]) -> str:
    headers = [line for line in lines if "versions" in line]
    table = rows(lines)
    calls = by_server(lines)
    versions = ", ".join(f"{name} {version}" for h in headers for name, version in h["versions"].items())
    out = [f"Generated by `{WRITE}` with {versions}, on {len(servers())} servers: {', '.join(servers())}."]
    *some, last = [outcome.short for outcome in OUTCOMES if outcome.harm]
    harms = f"{', '.join(some)} or {last}"
    out += ["", f"How many of each client's calls each server fools (with some reply below, the call {harms}):", ""]
    out += overview(calls)
    for header in headers:
        client = header["client"]
        out += ["", f"### {client}", "", header["check"].strip(), ""]
        out += per_server(calls.get(client, {}))
        out += ["", "| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
        out += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in table.get(client, [])]
    return "\n".join(out)


def _runs(items: list[str]) -> list[tuple[str, int]]:
    """Each run of equal items once, with its length."""
    return [(item, len(list(run))) for item, run in groupby(items)]


def replace_table(document: str, table: str) -> str:
    return matrix.replace_table(document, table, BEGIN, END)


def table_in(document: str) -> str:
    return matrix.table_in(document, BEGIN, END)


def main() -> None:
    parser = argparse.ArgumentParser(description="Run each Python client against mockllama; print the matrix.")
    parser.add_argument("--write", type=Path, help="replace the matrix between its markers in this page")
    parser.add_argument("--url", help="a running mockllama serve to use, rather than one started here")
    args = parser.parse_args()
    if args.url:
        table = render(observe(args.url.rstrip("/")))
    else:
        with serving() as url:
            table = render(observe(url))
    if args.write is None:
        print(table)
        return
    args.write.write_text(replace_table(args.write.read_text(), table))
    print(f"wrote the Python client matrix into {args.write}", file=sys.stderr)


if __name__ == "__main__":
    main()
