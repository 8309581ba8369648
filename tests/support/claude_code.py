"""The Claude Code table of docs/claude-code.md: what Claude Code does with each `/v1/messages`
scenario, chosen as its model, in each behaviour. From the checkout, with Claude Code installed
(`npm ci --prefix tests/claude-code --ignore-scripts`; scripts/test does):

    python tests/support/claude_code.py                               print the table
    python tests/support/claude_code.py --write docs/claude-code.md   replace it on the page

Each run is `claude -p PROMPT --model SCENARIO --max-turns 3` with `ANTHROPIC_BASE_URL` at
mockllama, `ANTHROPIC_API_KEY=unused`, a `HOME` and a working directory of its own, and its
non-essential traffic switched off. The whole run, mockllama included, happens in a network
namespace of its own (``unshare --net --map-root-user``), where there is only loopback: nothing
Claude Code tries to reach beyond mockllama leaves the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from itertools import groupby
from pathlib import Path

from mockllama.pytest_plugin.session import base_url_behaviours
from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios
from mockllama.teaching import matrix
from mockllama.wire.routes import MESSAGES_PATH

ROOT = Path(__file__).resolve().parents[2]  # the checkout (no import of support: this also runs as a script)
PACKAGE = ROOT / "tests" / "claude-code"
NAME = "@anthropic-ai/claude-code"
PAGE = ROOT / "docs" / "claude-code.md"
BEGIN, END = "<!-- claude-code:begin -->", "<!-- claude-code:end -->"
WRITE = "python tests/support/claude_code.py --write docs/claude-code.md"
UNCHOSEN = "(its own model)"
QUIET = {  # no telemetry, error reports, update checks or other calls home
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


def version() -> str:
    return json.loads((PACKAGE / "package.json").read_text())["dependencies"][NAME]


def launcher(prefix: Path = PACKAGE) -> Path:
    """The package's own fallback launcher in an npm prefix: it runs the platform's binary, with no
    install script run."""
    return prefix / "node_modules" / NAME / "cli-wrapper.cjs"


def missing() -> str | None:
    """Why Claude Code cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed: apt-get install nodejs npm"
    if not launcher().is_file():
        return "Claude Code is not installed: npm ci --prefix tests/claude-code --ignore-scripts; scripts/test does"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare and ip (util-linux, iproute2) run it with loopback alone"
    return None


def cases() -> list[tuple[str, str]]:
    """(model, prompt): every bundled scenario with a /v1/messages recording, chosen by name, with
    its own prompt; and Claude Code's own model, which chooses nothing. A sweep's positions are left
    out: each run of Claude Code takes seconds, and the messages-tool-cut-20 row shows what one does."""
    found = []
    for name, scenario in sorted(load_scenarios([bundled_cassette_dir()]).items()):
        interaction = scenario.find("POST", MESSAGES_PATH, False) or scenario.find("POST", MESSAGES_PATH, True)
        if interaction is not None and scenario.sweep is None:
            found.append((name, interaction.request_json["messages"][0]["content"]))
    return [*found, (UNCHOSEN, found[0][1])]


def _said(text: str) -> str:
    """Claude Code's output as the page shows it: its first line, without ids."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = re.sub(r"\b(req|msg|toolu)_[A-Za-z0-9]+", r"\1_…", line)
    return line if len(line) <= 160 else line[:159] + "…"


def _journal(url: str, since: int) -> tuple[list[dict], int]:
    with urllib.request.urlopen(f"{url}/_mockllama/journal?since={since}", timeout=30) as reply:
        read = json.load(reply)
    return read["entries"], read["last_id"]


def run_inside(claude: Path) -> None:
    """In the namespace: loopback up, mockllama serve on it, then every case, run with the launcher
    ``claude``; one JSON line each."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    server = subprocess.Popen(
        [sys.executable, "-m", "mockllama", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        _, last = _journal(url, 0)
        for model, prompt in cases():
            for behaviour in base_url_behaviours():
                with tempfile.TemporaryDirectory() as home:
                    env = {
                        "PATH": os.environ["PATH"],
                        "HOME": home,
                        "ANTHROPIC_BASE_URL": f"{url}/{behaviour}",
                        "ANTHROPIC_API_KEY": "unused",
                        **QUIET,
                    }
                    chosen = [] if model == UNCHOSEN else ["--model", model]
                    result = subprocess.run(
                        ["node", str(claude), "-p", prompt, *chosen, "--max-turns", "3"],
                        cwd=home,
                        env=env,
                        capture_output=True,
                        text=True,
                        timeout=300,
                        stdin=subprocess.DEVNULL,
                    )
                entries, last = _journal(url, last)
                line = {
                    "model": model,
                    "behaviour": behaviour,
                    "exit": result.returncode,
                    "said": _said(result.stdout or result.stderr),
                    "reached": [[e["path"], e["status"], e["scenario"], e["turn"]] for e in entries],
                }
                print(json.dumps(line), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)


def observe(prefix: Path = PACKAGE) -> list[dict]:
    """Every case in every behaviour, run with the Claude Code installed in the npm prefix ``prefix``."""
    result = subprocess.run(
        ["unshare", "--net", "--map-root-user", sys.executable, __file__, "--inside", str(launcher(prefix))],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=ROOT,
    )
    if result.returncode != 0:
        raise SystemExit(f"the Claude Code runs failed:\n{result.stderr[-4000:]}")
    return [json.loads(line) for line in result.stdout.splitlines()]


def _requests(reached: list) -> str:
    """What answered each request, in order, repeats counted; the probe of the base URL left out."""
    said = []
    for path, status, scenario, turn in reached:
        if not path.endswith(MESSAGES_PATH):
            continue
        said.append(f"`{scenario}` turn {turn}" if status == 200 else f"{status}")
    return ", ".join(item if count == 1 else f"{item} ×{count}" for item, count in _runs(said)) or "none"


def render(lines: list[dict], claude_version: str | None = None) -> str:
    """The page's table; ``claude_version`` is the one that ran, the pinned one unless said."""
    behaviours = base_url_behaviours()
    grouped: dict[str, dict[tuple, list[str]]] = {}
    for line in lines:
        outcome = (_requests(line["reached"]), str(line["exit"]), line["said"])
        grouped.setdefault(line["model"], {}).setdefault(outcome, []).append(line["behaviour"])
    out = [
        f"Generated by `{WRITE}` with Claude Code {claude_version or version()}.",
        "",
        "| `--model` | behaviours | its requests to `/v1/messages`: what answered | exit status | what it printed |",
        "| --- | --- | --- | --- | --- |",
    ]
    for model, outcomes in grouped.items():
        for (requests, exit_status, said), chosen in outcomes.items():
            named = "every behaviour" if sorted(chosen) == sorted(behaviours) else ", ".join(chosen)
            shown = model if model == UNCHOSEN else f"`{model}`"
            cells = [shown, named, requests, exit_status, said.replace("`", "'")]
            out.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(out)


def _runs(items: list[str]) -> list[tuple[str, int]]:
    """Each run of equal items once, with its length."""
    return [(item, len(list(run))) for item, run in groupby(items)]


def replace_table(document: str, table: str) -> str:
    return matrix.replace_table(document, table, BEGIN, END)


def table_in(document: str) -> str:
    return matrix.table_in(document, BEGIN, END)


def main() -> None:
    parser = argparse.ArgumentParser(description="Run Claude Code against each /v1/messages scenario.")
    parser.add_argument("--write", type=Path, help="replace the table between its markers in this page")
    parser.add_argument("--inside", type=Path, metavar="LAUNCHER", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        run_inside(args.inside)
        return
    problem = missing()
    if problem:
        raise SystemExit(problem)
    table = render(observe())
    if args.write is None:
        print(table)
        return
    args.write.write_text(replace_table(args.write.read_text(), table))
    print(f"wrote the Claude Code table into {args.write}", file=sys.stderr)


if __name__ == "__main__":
    main()
