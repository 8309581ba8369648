"""Runs one Python client's calls against a running mockllama and prints what each did, one JSON line each.

    python tests/pyclients/harness.py CLIENT URL BEHAVIOUR...
    python tests/pyclients/harness.py CLIENT URL --sweep NAME LAST BEHAVIOUR...

The second form runs each call that takes a cut tool call at every position of a sweep, NAME@1 to
NAME@LAST, each chosen by name: every position in this one process, as a client's user would.

CLIENT names a module of tests/pyclients/calls/. It runs in the client's own virtualenv (llama-index
has one of its own), so this file uses the standard library alone. tests/support/python_clients.py
runs it for every client and makes docs/python-clients.md of the lines.

Every request is sent unselected: no X-Mockllama-Scenario header, and the model is the client's
ordinary one. Which recording answered is read from mockllama's journal after each call.
"""

# No `from __future__ import annotations`: llama-index writes write_file's signature into the tool's
# description, and would write its annotations as strings.
import importlib
import json
import os
import re
import ssl
import sys
import urllib.request
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

COUNT = "Count from 1 to 200, separated by spaces."  # the seed prompt: text-cut-8 at 8 tokens
CAPITAL = "What is the capital of France? Answer in one sentence."  # text-finishes, at 400
WRITE = "Write the text 'Hello, world!' to the file /tmp/hello.txt."  # the tool prompt, at 20
TOOL_NAME = "write_file"
TOOL_DESCRIPTION = "Write text content to a file at the given path."
PARAMETERS = {  # the catalogue's, in its key order
    "properties": {
        "path": {"description": "Absolute path of the file", "type": "string"},
        "content": {"description": "Full text to write", "type": "string"},
    },
    "required": ["path", "content"],
    "type": "object",
}
RESPONSES_TOOL = {"description": TOOL_DESCRIPTION, "name": TOOL_NAME, "parameters": PARAMETERS, "type": "function"}
CHAT_TOOL = {
    "function": {"description": TOOL_DESCRIPTION, "name": TOOL_NAME, "parameters": PARAMETERS},
    "type": "function",
}
ANTHROPIC_TOOL = {"description": TOOL_DESCRIPTION, "input_schema": PARAMETERS, "name": TOOL_NAME}


@dataclass(frozen=True)
class Kind:
    """A scenario kind: the prompt, the limit, whether the write_file tool is offered, and the
    scenario chosen by name as the model (``chosen``; ``chosen_messages`` on /v1/messages), where
    a client's own request reaches no reply of this kind."""

    name: str
    prompt: str
    limit: int
    tool: bool = False
    chosen: str | None = None
    chosen_messages: str | None = None

    def model(self, default: str) -> str:
        """The model a client sends: its own, or the chosen scenario's name."""
        return self.chosen or default


CUT_CALL = "cut call, chosen"  # the kind a call takes a cut tool call in: such calls take a sweep too
KINDS = (
    Kind("cut text", COUNT, 8),
    Kind("tool request", WRITE, 20, tool=True),
    # SmolLM2 writes Python rather than call the tool when a client sends its own tool request, so
    # a cut call is reached only by name: the recordings made with an assistant prefill.
    Kind(CUT_CALL, WRITE, 20, tool=True, chosen="tool-cut-20", chosen_messages="messages-tool-forced-cut-20"),
    Kind("cut call whose arguments parse, chosen", WRITE, 30, tool=True, chosen="tool-cut-30"),
    Kind("finished", CAPITAL, 400),
)


@dataclass
class Outcome:
    """What a call showed: ``says`` the field a user checks and its value; ``stream`` whether a
    streamed reply was read to its end ("-" for a call that does not stream); ``tool`` what became
    of the tool call (run, or handed to the user, or not)."""

    says: str = "-"
    stream: str = "-"
    tool: str = "-"


RAN: list[dict] = []  # each run of write_file, with its arguments


def write_file(path: str, content: str) -> str:
    """Write text content to a file at the given path.

    Args:
        path: Absolute path of the file
        content: Full text to write
    """
    RAN.append({"path": path, "content": content})  # recorded, never written
    return f"wrote {len(content)} characters to {path}"


def ran() -> str:
    return f"ran {len(RAN)}×" if RAN else "not run"


def shown(value, width: int = 28) -> str:
    """A value as Python shows it, cut to ``width`` characters, as Markdown code: fenced with one
    backtick more than the longest run of them inside."""
    text = repr(value)
    text = text if len(text) <= width else text[: width - 1] + "…"
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if len(fence) > 1 else f"`{text}`"


def parses(arguments) -> str:
    if isinstance(arguments, dict):
        return "arguments parse"
    try:
        json.loads(arguments)
    except (TypeError, ValueError):
        return "arguments do not parse"
    return "arguments parse"


def described(error: BaseException) -> str:
    """An exception as the page shows it: its class, and its first line without ids or addresses."""
    status = getattr(error, "status_code", None)
    name = type(error).__name__
    if isinstance(status, int):
        return f"{name} ({status})"
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    text = re.sub(r"\b(resp|msg|fc|call|chatcmpl|toolu)_[A-Za-z0-9]+", r"\1_…", text)
    text = text if len(text) <= 90 else text[:89] + "…"
    return f"{name}: {text}" if text else name


@dataclass(frozen=True)
class Call:
    """One call of a client: ``run(base, kind)`` -> Outcome, where ``base`` is the behaviour's root
    URL (``http://127.0.0.1:PORT/BEHAVIOUR``); ``streams``: it reads an event stream;
    ``runs_tools``: the client runs write_file itself (an agent), rather than handing the call over."""

    name: str
    run: object
    streams: bool = False
    runs_tools: bool = False
    kinds: tuple[str, ...] = field(default=tuple(k.name for k in KINDS))


def journal(root: str, since: int) -> tuple[list[dict], int]:
    with urllib.request.urlopen(f"{root}/_mockllama/journal?since={since}", timeout=30) as reply:
        read = json.load(reply)
    return read["entries"], read["last_id"]


def _header(calls) -> dict:
    versions = {name: metadata.version(name) for name in calls.PACKAGES}
    return {"client": calls.CLIENT, "versions": versions, "check": calls.CHECK}


def _line(calls, call: Call, kind: Kind, root: str, behaviour: str, since: int) -> tuple[dict, int]:
    """What one call did with one kind in one behaviour, and the journal's last id after it."""
    RAN.clear()
    try:
        outcome = call.run(f"{root}/{behaviour}", kind)
    except Exception as error:  # what the client raised is the outcome being measured
        outcome = Outcome(says=f"raises {described(error)}", stream="raises" if call.streams else "-")
        if kind.tool and call.runs_tools:
            outcome.tool = ran()
    entries, last = journal(root, since)
    line = {
        "client": calls.CLIENT,
        "call": call.name,
        "kind": kind.name,
        "behaviour": behaviour,
        "reached": [[e["status"], e["scenario"], e["selected_by"]] for e in entries],
        "says": outcome.says,
        "stream": outcome.stream,
        "tool": outcome.tool,
    }
    return line, last


def observe(client: str, root: str, behaviours: list[str], out) -> None:
    """Each call of ``client``, for each kind and behaviour: one JSON line to ``out``."""
    calls = importlib.import_module(f"calls.{client}")
    out.write(json.dumps(_header(calls)) + "\n")
    _, last = journal(root, 0)
    for call in calls.CALLS:
        for kind in KINDS:
            if kind.name not in call.kinds:
                continue
            for behaviour in behaviours:
                line, last = _line(calls, call, kind, root, behaviour, last)
                out.write(json.dumps(line) + "\n")
                out.flush()


def position(sweep: str, limit: int) -> Kind:
    """A sweep's position as a kind: the tool request at that limit, the position chosen by name."""
    return Kind(f"{sweep}@{limit}", WRITE, limit, tool=True, chosen=f"{sweep}@{limit}")


def observe_sweep(client: str, root: str, sweep: str, last_position: int, behaviours: list[str], out) -> None:
    """Each call of ``client`` that takes a cut tool call (the kind "cut call, chosen"), at every
    position of ``sweep`` and in each behaviour: one JSON line to ``out``, with its ``position``.
    A client module names the sweeps its endpoint has recordings of in ``SWEEPS`` (all, unsaid)."""
    calls = importlib.import_module(f"calls.{client}")
    out.write(json.dumps(_header(calls)) + "\n")
    if sweep not in getattr(calls, "SWEEPS", (sweep,)):
        return
    _, last = journal(root, 0)
    for call in calls.CALLS:
        if CUT_CALL not in call.kinds:
            continue
        for limit in range(1, last_position + 1):
            for behaviour in behaviours:
                line, last = _line(calls, call, position(sweep, limit), root, behaviour, last)
                out.write(json.dumps({**line, "position": limit}) + "\n")
                out.flush()


def share_tls_contexts() -> None:
    """Make ``ssl.create_default_context`` hand out one context per set of arguments. The clients
    build one for every client object, reading the whole CA bundle each time, which is most of what
    a call costs here; nothing here speaks TLS, and a context may serve any number of connections."""
    made: dict = {}
    create = ssl.create_default_context

    def shared(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        if key not in made:
            made[key] = create(*args, **kwargs)
        return made[key]

    ssl.create_default_context = shared


if __name__ == "__main__":
    share_tls_contexts()  # before any client is imported
    lines = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a client's own prints (litellm's) go to stderr
    sys.path.insert(0, str(Path(__file__).parent))
    import harness  # the module the calls import (and write_file's record of runs), not __main__

    client, root, rest = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3:]
    if rest[:1] == ["--sweep"]:
        harness.observe_sweep(client, root, rest[1], int(rest[2]), rest[3:], lines)
    else:
        harness.observe(client, root, rest, lines)
