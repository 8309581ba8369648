"""Every example in README.md and docs/ runs, and prints what the page says it prints.

tests/support/docs_pages.py finds the blocks (with Sybil); each is run here by its language:

- ``python``: run as a script; the ``# `` comment lines that end it are what it must print, line
  for line. A block with a ``title="test_....py"`` is a file to save: it is written into the
  page's working folder, and a ``console`` block of the page runs it.
- ``console``: each ``$ `` command (a line ending in ``\\`` goes on to the next) runs in bash in
  the page's working folder, and the lines after it are its output, compared as doctest's
  ELLIPSIS and NORMALIZE_WHITESPACE compare them: ``...`` stands for what the page leaves out.
  ``$ mockllama serve ARGS &`` starts a server, waited for and stopped by the test.
- ``json``: must parse; a scenario catalogue must be one ``mockllama record`` accepts.

The pages say ``127.0.0.1:18090`` (``mockllama serve``'s default): each block gets a free port
instead, and a fresh ``mockllama serve`` on it unless the block starts its own. A block these
tests cannot run offline says why in a ``<!-- not run: ... -->`` comment right before it
(tests/docs/test_docs.py holds every block to one or the other).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import mockllama
from support.docs_pages import ROOT, Block, all_blocks, blocks
from support.waiting import wait_until_listening

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PORT = "18090"  # the port the pages show
# Where this test imports mockllama from, handed to every process the examples start.
IMPORT_ROOT = str(Path(mockllama.__file__).resolve().parents[1])
END_OF_COMMAND = "\x1edocs-example: end of command\x1e"


def runnable(block: Block) -> bool:
    return block.not_run is None and not block.title and block.language in ("python", "console", "json")


RUNNABLE = [block for block in all_blocks() if runnable(block)]


def printed(source: str) -> list[str]:
    """The output a python block promises: the ``# `` comment lines that end it."""
    lines = source.rstrip("\n").splitlines()
    promised = []
    while lines and lines[-1].startswith("# "):
        promised.insert(0, lines.pop()[2:])
    return promised


def commands(source: str) -> list[tuple[str, str]]:
    """A console block's ``$ `` commands, each with the output shown after it."""
    steps: list[tuple[str, str]] = []
    lines = source.splitlines()
    number = 0
    while number < len(lines):
        line = lines[number]
        if not line.startswith("$ "):
            raise AssertionError(f"console output before any command: {line!r}")
        command = [line[2:]]
        while command[-1].endswith("\\") and number + 1 < len(lines):
            number += 1
            command.append(lines[number])
        output = []
        while number + 1 < len(lines) and not lines[number + 1].startswith("$ "):
            number += 1
            output.append(lines[number])
        steps.append(("\n".join(command), "\n".join(output)))
        number += 1
    return steps


def output_matches(shown: str, got: str) -> bool:
    """doctest's comparison, with ``...`` eating the spaces around it: ``{"a":1, ... "b":2}``."""
    shown = re.sub(r"\s*\.\.\.\s*", "...", shown.strip())
    checker = doctest.OutputChecker()
    return checker.check_output(shown + "\n", got.strip() + "\n", doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def example_env(bin_dir: Path) -> dict:
    """The environment of an example's processes: `mockllama`, `pytest` and `python` are this test's."""
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), IMPORT_ROOT]))
    env.pop("NO_COLOR", None)
    return env


def tools(bin_dir: Path) -> Path:
    """Commands the pages use, run by this test's Python (the pages' `pytest` gets its PYTHONPATH added)."""
    bin_dir.mkdir(exist_ok=True)
    wrappers = {
        "python": f'exec "{sys.executable}" "$@"',
        "python3": f'exec "{sys.executable}" "$@"',
        "mockllama": f'exec "{sys.executable}" -m mockllama "$@"',
        # `PYTHONPATH=examples pytest ...` on a page must still import this test's mockllama
        "pytest": f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{IMPORT_ROOT}" exec "{sys.executable}" -m pytest "$@"',
    }
    for name, body in wrappers.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    return bin_dir


@contextlib.contextmanager
def serving(args: list[str], port: int, env: dict, cwd: Path):
    """`mockllama serve ARGS --port PORT`, waited for until it answers, stopped at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mockllama", "serve", *args, "--port", str(port)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_listening(process, port, 60, f"mockllama serve {' '.join(args)}")
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def workdir(tmp_path) -> Path:
    """The page's working folder: its titled files are written here, with examples/ beside them."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "examples").symlink_to(ROOT / "examples")
    return folder


def run_python(block: Block, port: int, env: dict, workdir: Path) -> None:
    promised = printed(block.source)
    source = block.source.replace(PORT, str(port))
    output = io.StringIO()
    with contextlib.ExitStack() as stack:
        if PORT in block.source:
            stack.enter_context(serving([], port, env, workdir))
        stack.enter_context(contextlib.redirect_stdout(output))
        exec(compile(source, block.where, "exec"), {"__name__": "__main__"})
    assert output.getvalue().splitlines() == promised, f"{block.where} printed:\n{output.getvalue()}"


def run_console(block: Block, port: int, env: dict, workdir: Path) -> None:
    for earlier in blocks(block.page):  # the page's files, as a reader would have saved them
        if earlier.title and earlier.line < block.line:
            (workdir / earlier.title).write_text(earlier.source)
    steps = [
        (command.replace(PORT, str(port)), shown.replace(PORT, str(port))) for command, shown in commands(block.source)
    ]
    starts = [shlex.split(command) for command, _ in steps if re.match(r"mockllama serve\b.*&$", command)]
    run = [(command, shown) for command, shown in steps if not re.match(r"mockllama serve\b.*&$", command)]
    script = "".join(
        f"{command}\n__status=$?; printf '\\n{END_OF_COMMAND}\\n'; (exit $__status)\n" for command, _ in run
    )
    with contextlib.ExitStack() as stack:
        for args in starts:  # mockllama serve ARGS &
            stack.enter_context(serving(args[2:-1], port, env, workdir))
        if not starts and PORT in block.source:
            stack.enter_context(serving([], port, env, workdir))
        result = subprocess.run(
            ["bash", "-c", script], cwd=workdir, env=env, capture_output=True, text=True, timeout=300
        )
    outputs = result.stdout.split(f"\n{END_OF_COMMAND}\n")
    assert len(outputs) == len(run) + 1, f"{block.where}: the commands did not all run:\n{result.stdout}{result.stderr}"
    for (command, shown), got in zip(run, outputs):
        assert output_matches(shown, got), (
            f"{block.where}: `{command}` printed\n{got}\nbut the page shows\n{shown}\nstderr:\n{result.stderr}"
        )


def run_json(block: Block, port: int, env: dict, workdir: Path) -> None:
    data = json.loads(block.source)
    if isinstance(data, dict) and "scenarios" in data:
        (workdir / "catalogue.json").write_text(block.source)
        # record reads the whole catalogue before it connects: reaching the server proves it was accepted
        result = subprocess.run(
            [
                "mockllama",
                "record",
                "--catalogue",
                "catalogue.json",
                "--out",
                "out",
                "--server",
                f"http://127.0.0.1:{port}",
            ],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2 and "cannot reach a server" in result.stderr, result.stderr


RUNNERS = {"python": run_python, "console": run_console, "json": run_json}


@pytest.mark.parametrize("block", RUNNABLE, ids=[block.where for block in RUNNABLE])
def test_example_prints_what_the_page_shows(block, workdir, tmp_path):
    env = example_env(tools(tmp_path / "bin"))
    RUNNERS[block.language](block, free_port(), env, workdir)


def test_console_blocks_are_split_into_commands_and_their_output():
    assert commands("$ a \\\n    b\none\n$ c\n") == [("a \\\n    b", "one"), ("c", "")]


def test_the_output_check_lets_dots_stand_for_what_is_left_out():
    assert output_matches('{"a":1, ... "b":2, ...}', '{"a":1,"x":3,"b":2,"c":4}')
    assert not output_matches('{"a":1, ... "b":2}', '{"a":1,"b":3}')
    assert output_matches("one\n  two", "one two\n")
