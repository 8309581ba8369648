"""What a sweep shows a person: one row a position, with the output so far, whether a call's
arguments parse, and what each behaviour says of it.

A sweep has a position for every limit a reply can be cut at; a full explanation of each would be
the same lesson many times over. So ``mockllama explain`` and the teaching page show a sweep as one
table, compact enough to build for every position at once. Each behaviour's word is read from the
reply that behaviour builds (``reply_for``), never restated here.
"""

from __future__ import annotations

import json
import textwrap

from mockllama.behaviours.replay import reply_for
from mockllama.behaviours.variants import own_behaviours
from mockllama.recordings.cassettes import DEFAULT_SETUP, Interaction, Scenario
from mockllama.recordings.sweeps import runs, span
from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH, RESPONSES_PATH
from mockllama.wire.terminal import printable

# Where a position's reply is read from, first found: the endpoint the bug is on, then the others a
# sweep may be recorded on. The non-streamed reply carries the same output as the stream.
READ_FROM = (RESPONSES_PATH, MESSAGES_PATH, CHAT_PATH)
ABSENT = "(absent)"
LIMIT_KEYS = {RESPONSES_PATH: "max_output_tokens", MESSAGES_PATH: "max_tokens", CHAT_PATH: "max_tokens"}


def sweeps_in(scenarios: dict[str, Scenario]) -> dict[str, list[Scenario]]:
    """Each sweep's positions, in the order of their limits, by sweep name."""
    found: dict[str, list[Scenario]] = {}
    for scenario in scenarios.values():
        if scenario.sweep is not None:
            found.setdefault(scenario.sweep, []).append(scenario)
    return {name: sorted(positions, key=lambda p: p.limit or 0) for name, positions in found.items()}


def sweep_asked(name: str, scenarios: dict[str, Scenario]) -> tuple[str, int | None] | None:
    """The sweep a name asks for, and the position it marks: ``tool-call``, or ``tool-call@17``."""
    position = scenarios.get(name)
    if position is not None:
        return (position.sweep, position.limit) if position.sweep is not None else None
    return (name, None) if any(scenario.sweep == name for scenario in scenarios.values()) else None


def _reply_interaction(scenario: Scenario) -> Interaction | None:
    for path in READ_FROM:
        interaction = scenario.find("POST", path, False)
        if interaction is not None and interaction.status == 200:
            return interaction
    return None


def _parses(text) -> bool:
    try:
        json.loads(text)
    except (TypeError, ValueError):
        return False
    return True


def _responses_output(body: dict) -> tuple[list[str], str, bool | None]:
    items = [item for item in body.get("output") or [] if isinstance(item, dict)]
    if not items:
        return [], "", None
    last = items[-1]
    if last.get("type") == "function_call":
        arguments = last.get("arguments")
        return [str(i.get("type")) for i in items], arguments if isinstance(arguments, str) else "", _parses(arguments)
    text = "".join(part.get("text") or "" for part in last.get("content") or [] if isinstance(part, dict))
    return [str(i.get("type")) for i in items], text, None


def _messages_output(body: dict) -> tuple[list[str], str, bool | None]:
    """``/v1/messages``' content blocks: a tool_use carries its input already parsed (llama-server
    sends ``{}`` for arguments that do not parse), so there is no text to judge."""
    blocks = [block for block in body.get("content") or [] if isinstance(block, dict)]
    if not blocks:
        return [], "", None
    last = blocks[-1]
    if last.get("type") == "tool_use":
        text = json.dumps(last.get("input"), ensure_ascii=False)
    else:
        text = last.get("text") or last.get("thinking") or ""
    return [str(b.get("type")) for b in blocks], text, None


def _chat_output(body: dict) -> tuple[list[str], str, bool | None]:
    message = ((body.get("choices") or [{}])[0] or {}).get("message") or {}
    calls = message.get("tool_calls") or []
    if calls:
        arguments = (calls[-1].get("function") or {}).get("arguments")
        return ["tool_call"] * len(calls), arguments if isinstance(arguments, str) else "", _parses(arguments)
    return ["message"], message.get("content") or "", None


def _said(path: str, body: dict) -> str:
    """The word a client reads to know whether the reply is whole, on that endpoint."""
    if path == RESPONSES_PATH:
        value = body.get("status", ABSENT)
    elif path == MESSAGES_PATH:
        value = body.get("stop_reason", ABSENT)
    else:
        value = ((body.get("choices") or [{}])[0] or {}).get("finish_reason", ABSENT)
    return value if isinstance(value, str) else json.dumps(value)


def _kinds(types: list[str]) -> str:
    """Output item types in order, a run of one type written once with its count: ``function_call×2``."""
    runs: list[list] = []
    for kind in types:
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    return "+".join(f"{kind}×{count}" if count > 1 else str(kind) for kind, count in runs) or "(none)"


def position_row(scenario: Scenario, behaviours: list[str]) -> dict:
    """One position: what its reply holds so far and what each behaviour says of it."""
    row = {"limit": scenario.limit, "name": scenario.name, "cut": scenario.stopped_by_limit()}
    interaction = _reply_interaction(scenario)
    if interaction is None:
        return {**row, "output": "(not recorded)", "so_far": "", "parses": None, "said": {}}
    read = {RESPONSES_PATH: _responses_output, MESSAGES_PATH: _messages_output}.get(interaction.path, _chat_output)
    try:
        types, so_far, parses = read(interaction.body_json)
        said = {b: _said(interaction.path, json.loads(reply_for(b, interaction, scenario).body)) for b in behaviours}
    except Exception as err:  # untrusted recordings: one unreadable position never hides the others
        return {**row, "output": "(unreadable)", "so_far": f"{type(err).__name__}: {err}", "parses": None, "said": {}}
    return {**row, "output": _kinds(types), "so_far": so_far, "parses": parses, "said": said}


def sweep_story(name: str, positions: list[Scenario]) -> dict:
    """A sweep for the explainer and the page: its request (as the finished position sent it) and
    one compact row a position."""
    behaviours = own_behaviours()
    last = positions[-1]
    interaction = _reply_interaction(last)
    rows = [position_row(position, behaviours) for position in positions]
    return {
        "name": name,
        "kind": "sweep",
        "setup": last.setup,
        "endpoint": interaction.path if interaction else None,
        "request": interaction.request_json if interaction else None,
        "first": positions[0].limit,
        "last": last.limit,
        "behaviours": behaviours,
        "positions": rows,
        "lesson": lesson({"behaviours": behaviours, "positions": rows}),
    }


def changes(told: dict) -> dict[str, str]:
    """Where along the positions each column changes, one line a column: ``no 12-29, yes 30-37``."""
    rows = told["positions"]

    def line(pick, skip=()) -> str:
        found = runs([(row["limit"], pick(row)) for row in rows])
        return ", ".join(f"{value} {span(first, last)}" for value, first, last in found if value not in skip)

    yes_no = {True: "yes", False: "no", None: None}
    lines = {
        "output": line(lambda row: row["output"]),
        "parses": line(lambda row: yes_no[row["parses"]], skip=(None,)),
        "cut": line(lambda row: yes_no[row["cut"]], skip=(None,)),
    }
    lines.update({b: line(lambda row, b=b: row["said"].get(b, "-")) for b in told["behaviours"]})
    return {label: text for label, text in lines.items() if text}


def _spans(limits: list[int]) -> str:
    found = runs([(limit, limit - index) for index, limit in enumerate(limits)])  # consecutive limits
    return ", ".join(span(first, last) for _, first, last in found)


def lesson(told: dict) -> str:
    """What the table teaches, read from it: where the server said the reply was cut, which
    behaviours say there what they say of the finished reply, and where cut arguments parse."""
    rows = told["positions"]
    cut = [row for row in rows if row["cut"]]
    finished = next((row for row in reversed(rows) if row["cut"] is False), None)
    if not cut:
        return "No position was cut by its limit, by the server's own word."
    parts = [f"Cut at {_spans([row['limit'] for row in cut])}."]
    if finished is not None:
        for behaviour in told["behaviours"]:
            word = finished["said"].get(behaviour)
            hiding = [row["limit"] for row in cut if row["said"].get(behaviour) == word]
            if hiding:
                parts.append(f"{behaviour} says {word!r} at {_spans(hiding)}, as at {finished['limit']} (finished).")
    parsing = [row["limit"] for row in cut if row["parses"]]
    if parsing:
        parts.append(
            f"At {_spans(parsing)} the arguments parse although cut: a client that runs a call whose "
            "arguments parse runs a cut one."
        )
    return " ".join(parts)


# --- as text, for an 80-column terminal ---------------------------------------------------------

WIDTH = 80
SO_FAR_MIN = 16  # narrower, and the end of a call's arguments no longer shows what it is cut inside


def shown_text(text: str, width: int) -> str:
    """``text`` on one line, escaped; cut from the left when too long, as its end is where the cut fell."""
    flat = printable(text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t"))
    return flat if len(flat) <= width else "…" + flat[len(flat) - width + 1 :]


def _columns(told: dict) -> tuple[int, int, dict[str, int]]:
    rows = told["positions"]
    number = max(len(str(row["limit"])) for row in rows)
    output = min(20, max(len("output"), *(len(printable(row["output"])) for row in rows)))
    said = {b: max(len(b), *(len(printable(row["said"].get(b, "-"))) for row in rows)) + 1 for b in told["behaviours"]}
    return number, output, said


def render_sweep(told: dict, marked: int | None = None) -> list[str]:
    """A sweep as one table, a row a position (``>`` marks ``marked``), then where each column changes."""
    title = f"== {printable(told['name'])}: a sweep, positions {told['first']}-{told['last']} "
    lines = [title + "=" * max(0, WIDTH - len(title))]
    if told["setup"] != DEFAULT_SETUP:
        lines.append(f"set-up   {printable(told['setup'])} (answers by prompt only under serve --setup)"[:WIDTH])
    if told["endpoint"]:
        limit = LIMIT_KEYS.get(told["endpoint"], "the limit")
        lines.append(f"request  POST {told['endpoint']}, {limit} {told['first']}-{told['last']}, one a position")
        for key, value in (told["request"] or {}).items():
            if key not in (limit, "stream"):
                lines.append(_cut_right(printable(f"           {key}: {json.dumps(value, ensure_ascii=False)}")))
    number, output, said = _columns(told)
    fixed_width = 1 + number + 2 + output + 2 + 2 + len("parses") + 1
    shown: list[str] = []  # status columns that fit beside the text; the others in a table of their own
    rest: list[str] = []
    for behaviour in told["behaviours"]:
        room = WIDTH - fixed_width - sum(said[b] for b in shown) - said[behaviour]
        (shown if room >= SO_FAR_MIN and not rest else rest).append(behaviour)
    so_far = WIDTH - fixed_width - sum(said[b] for b in shown)
    header = " " + "N".rjust(number) + "  " + "output".ljust(output) + "  " + "so far (its end)".ljust(so_far)
    lines += ["", header + "  parses " + "".join(b.ljust(said[b]) for b in shown).rstrip()]
    for row in told["positions"]:
        parses = {True: "yes", False: "no", None: "-"}[row["parses"]]
        cells = "".join(printable(row["said"].get(b, "-")).ljust(said[b]) for b in shown)
        lines.append(
            (">" if row["limit"] == marked else " ")
            + str(row["limit"]).rjust(number)
            + "  "
            + shown_text(row["output"], output).ljust(output)
            + "  "
            + shown_text(row["so_far"], so_far).ljust(so_far)
            + "  "
            + parses.ljust(len("parses") + 1)
            + cells.rstrip()
        )
    if rest:
        lines += ["", " " + "N".rjust(number) + "  " + "".join(b.ljust(said[b]) for b in rest).rstrip()]
        for row in told["positions"]:
            cells = "".join(printable(row["said"].get(b, "-")).ljust(said[b]) for b in rest)
            lines.append(
                ((">" if row["limit"] == marked else " ") + str(row["limit"]).rjust(number) + "  " + cells).rstrip()
            )
    lines += ["", "where it changes (cut: what the server itself said of the limit)"]
    for label, text in changes(told).items():
        lines += _folded(f"  {label:<8}", printable(text))
    lines += ["", *_folded("lesson:  ", printable(told["lesson"]))]
    return [*lines, ""]


def _cut_right(line: str) -> str:
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"


def _folded(prefix: str, text: str) -> list[str]:
    return textwrap.wrap(
        text, WIDTH, initial_indent=prefix, subsequent_indent=" " * len(prefix), break_on_hyphens=False
    ) or [prefix]
