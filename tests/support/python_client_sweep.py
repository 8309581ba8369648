"""The sweep view of the Python client matrix: every client call that takes a cut tool call, at every
position of the tool-call sweep, in `buggy` and `fixed`, classified by tests/support/client_outcomes.py.
From the checkout, with the `clients` extra installed:

    python tests/support/python_client_sweep.py           print the words
    python tests/support/python_client_sweep.py --write   write the picture and the words into docs/

Each client runs once, in its own process, through every position (tests/pyclients/harness.py
--sweep). tests/clients/test_python_clients.py makes both afresh and compares them with the docs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from mockllama.recordings.cassettes import bundled_cassette_dir, load_cassette, sweep_positions
from mockllama.teaching import matrix

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for `support` when run as a script

from support import python_clients, sweep_picture  # noqa: E402
from support.client_outcomes import HANDED_PARSED, OUTCOMES, OutcomeClass, Recorded, classify, recorded  # noqa: E402

SWEEP = "tool-call"
SWEEPS_DIR = bundled_cassette_dir() / "llama-server-b11434" / "smollm2-135m-instruct-q4_1-sweeps"
SWEEP_FILE = SWEEPS_DIR / f"{SWEEP}.sweep.yaml"
BEHAVIOURS = ("buggy", "fixed")
HEADINGS = {"buggy": "buggy: what llama-server sends", "fixed": "fixed: what a correct server sends"}
PICTURE = python_clients.ROOT / "docs" / "images" / "python-clients-sweep.svg"
BEGIN, END = "<!-- python-clients-sweep:begin -->", "<!-- python-clients-sweep:end -->"
WRITE = "python tests/support/python_client_sweep.py --write"


def positions() -> dict[int, Recorded]:
    """The sweep's positions, by limit: what each recording holds."""
    return {scenario.limit or 0: recorded(scenario) for scenario in sweep_positions(load_cassette(SWEEP_FILE))}


def observe(url: str, last: int, clients=python_clients.CLIENTS) -> list[dict]:
    """Every client's lines at every position: one harness process a client."""
    lines = []
    for module, extra in clients:
        lines += python_clients.harness_lines(
            module, python_clients.python_for(extra), url, ["--sweep", SWEEP, str(last), *BEHAVIOURS]
        )
    return lines


@dataclass(frozen=True)
class Row:
    """One client call: in each behaviour, its outcome class at each position (1 first) and its
    lines, kept for the words."""

    client: str
    call: str
    outcomes: dict[str, list[OutcomeClass]]
    lines: dict[str, list[dict]]

    @property
    def label(self) -> str:
        return f"{self.client} {self.call}"


def rows(lines: list[dict], recordings: dict[int, Recorded]) -> list[Row]:
    """The client calls in the order they ran, each classified at every position. A line that reached
    another recording than its position's is refused here: the picture would be of the wrong reply."""
    found: dict[tuple[str, str], Row] = {}
    for line in lines:
        if "position" not in line:
            continue
        first = line["reached"][0] if line["reached"] else None
        if first is None or first[:2] != [200, line["kind"]]:
            raise SystemExit(f"{line['client']} {line['call']} at {line['kind']} reached {line['reached']}")
        row = found.setdefault((line["client"], line["call"]), Row(line["client"], line["call"], {}, {}))
        row.outcomes.setdefault(line["behaviour"], []).append(classify(line, recordings[line["position"]]))
        row.lines.setdefault(line["behaviour"], []).append(line)
    return list(found.values())


def spans(numbers: list[int]) -> str:
    """``[12, 13, 14, 20]`` as ``12-14, 20``."""
    runs = [[n for _, n in run] for _, run in groupby(enumerate(numbers), lambda pair: pair[1] - pair[0])]
    return ", ".join(f"{run[0]}" if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def phase(reply: Recorded) -> str:
    """What the server sent at a position, as the picture's top strip and the words name it."""
    if not reply.cut:
        return "the finished call"
    if not reply.call:
        return "the call's markup as text"
    return "cut arguments that parse" if reply.parses else "arguments that do not parse"


def phases(recordings: dict[int, Recorded]) -> list[tuple[str, list[int]]]:
    """Runs of positions where the server sent the same kind of reply, in order."""
    ordered = sorted(recordings)
    return [(name, [n for n in run]) for name, run in groupby(ordered, lambda n: phase(recordings[n]))]


def _handed(line: dict) -> str:
    found = HANDED_PARSED.search(line["tool"])
    return line["tool"][found.end() - 1 :] if found else line["tool"]


def _where(row: Row, outcome: OutcomeClass) -> dict[str, list[int]]:
    return {
        behaviour: [n for n, got in enumerate(classes, start=1) if got is outcome]
        for behaviour, classes in row.outcomes.items()
    }


def _said(where: dict[str, list[int]]) -> str:
    """``at 12-29 in buggy and fixed``, or each behaviour's own positions."""
    present = {behaviour: numbers for behaviour, numbers in where.items() if numbers}
    if len({tuple(numbers) for numbers in present.values()}) == 1 and len(present) > 1:
        return f"at {spans(next(iter(present.values())))} in {' and '.join(present)}"
    return "; ".join(f"at {spans(numbers)} in {behaviour}" for behaviour, numbers in present.items())


def _repairs(row: Row, where: dict[str, list[int]]) -> str:
    """What the repaired calls were: each value held for more than one position, and the last."""
    said = {}
    for behaviour, numbers in where.items():
        if not numbers:
            continue
        by_position = {line["position"]: _handed(line) for line in row.lines[behaviour] if line["position"] in numbers}
        runs = [(value, [n for n, _ in run]) for value, run in groupby(by_position.items(), lambda pair: pair[1])]
        shown = [(value, ns) for index, (value, ns) in enumerate(runs) if len(ns) > 1 or index == len(runs) - 1]
        text = ", ".join(f"`{value}` at {spans(ns)}" for value, ns in shown)
        others = len(runs) - len(shown)
        said[behaviour] = text + (f", and {others} more, one position each" if others else "")
    if len(set(said.values())) == 1:
        return "into " + next(iter(said.values()))
    return "; ".join(f"in {behaviour} into {text}" for behaviour, text in said.items())


def _noticed_everywhere(table: list[Row], recordings: dict[int, Recorded]) -> str:
    cut = [n for n, reply in recordings.items() if reply.cut]
    noticed = next(outcome for outcome in OUTCOMES if outcome.name == "noticed the cut")
    counts = [
        f"{sum(all(row.outcomes[b][n - 1] is noticed for n in cut) for row in table)} of {len(table)} in {b}"
        for b in BEHAVIOURS
    ]
    return f"Calls that notice the cut at every cut position ({spans(cut)}): {', '.join(counts)}."


def words(table: list[Row], recordings: dict[int, Recorded]) -> str:
    """The facts a reader needs beside the picture, made from it: what the server sent where, how
    many calls notice every cut, and where a call takes a cut call for a whole one."""
    out = ["What the server sends: " + "; ".join(f"at {spans(ns)}, {name}" for name, ns in phases(recordings)) + "."]
    out += ["", *(f"- **{o.mark}** {o.name}: {o.meaning}" for o in OUTCOMES)]
    out += ["", _noticed_everywhere(table, recordings)]
    for outcome in OUTCOMES:
        if not outcome.harm:
            continue
        said = []
        for row in table:
            where = _where(row, outcome)
            if any(where.values()):
                repairs = f" ({_repairs(row, where)})" if outcome.name == "handed over a repaired call" else ""
                said.append(f"{row.label} {_said(where)}{repairs}")
        if said:
            out += ["", f"**{outcome.name.capitalize()}** ({outcome.mark}): " + "; ".join(said) + "."]
    return "\n".join(out)


def render(table: list[Row], recordings: dict[int, Recorded], versions: str) -> tuple[str, str]:
    """The picture (SVG text) and the words for the page."""
    picture = sweep_picture.draw(
        [row.label.replace("`", "") for row in table],
        [index for index, row in enumerate(table) if index == 0 or table[index - 1].client != row.client],
        {behaviour: [row.outcomes[behaviour] for row in table] for behaviour in BEHAVIOURS},
        phases(recordings),
        OUTCOMES,
        title=f"Python clients at every position of the {SWEEP} sweep",
        headings=HEADINGS,
    )
    said = (
        f"Generated by `{WRITE}` with {versions}.\n\n"
        f"![What each Python client does at each position of the {SWEEP} sweep]"
        f"(images/{PICTURE.name})\n\n{words(table, recordings)}"
    )
    return picture, said


def versions(lines: list[dict]) -> str:
    return ", ".join(f"{name} {v}" for line in lines if "versions" in line for name, v in line["versions"].items())


def generate(url: str) -> tuple[str, str]:
    recordings = positions()
    lines = observe(url, max(recordings))
    return render(rows(lines, recordings), recordings, versions(lines))


def write(picture: str, said: str) -> None:
    """The picture into its file, the words between their markers in the page."""
    PICTURE.parent.mkdir(exist_ok=True)
    PICTURE.write_text(picture)
    page = python_clients.PAGE
    page.write_text(matrix.replace_table(page.read_text(), said, BEGIN, END))


def main() -> None:
    parser = argparse.ArgumentParser(description="Run each Python client at every position of the tool-call sweep.")
    parser.add_argument("--write", action="store_true", help=f"write {PICTURE.name} and the words into the page")
    parser.add_argument("--url", help="a running mockllama serve to use, rather than one started here")
    args = parser.parse_args()
    if args.url:
        picture, said = generate(args.url.rstrip("/"))
    else:
        with python_clients.serving() as url:
            picture, said = generate(url)
    if not args.write:
        print(said)
        return
    write(picture, said)
    print(f"wrote {PICTURE} and the words into {python_clients.PAGE}", file=sys.stderr)


if __name__ == "__main__":
    main()
