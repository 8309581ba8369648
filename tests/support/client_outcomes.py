"""What a client did with a reply, in a few classes: declared once, for the Python client matrix and
its sweep view (docs/python-clients.md), the picture's legend and the words beside it.

A class is judged from one line of tests/pyclients/harness.py (what the call said, and what became
of the tool call) beside what the recording it reached holds (``Recorded``): whether the server
itself said the reply was cut, whether it holds a call, whether that call's arguments parse. The
classes are tried in order, the first that applies wins, so a client that ran a call it was told
was cut counts as having run it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from mockllama.recordings.cassettes import Scenario
from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH, RESPONSES_PATH

# A field a user checks, then a value that says "cut": `status` incomplete, `finish_reason` length; or the
# reason `incomplete_details` gives, which the calls write in brackets after the status: `status` None
# (max_output_tokens).
CUT_SAID = re.compile(r"` (incomplete|length|max_tokens)\b|\(max_output_tokens\)")
# The call handed over as arguments already parsed: in `tool_calls`: {...}, `tool_kwargs` {...}.
HANDED_PARSED = re.compile(r"`:? \{")
SET_ASIDE = ("no call", "not run")  # what the calls modules say of a call nobody ran or handed over


@dataclass(frozen=True)
class Recorded:
    """What the recording a request reached holds: ``cut`` whether the server itself said its
    limit cut the reply; ``arguments`` the text of its tool call's arguments (None: no call)."""

    cut: bool
    arguments: str | None

    @property
    def call(self) -> bool:
        return self.arguments is not None

    @property
    def parses(self) -> bool:
        try:
            json.loads(self.arguments or "")
        except ValueError:
            return False
        return True

    @property
    def kind(self) -> str:
        """The reply in two or three words, as the matrix's per-server tables group what a call made of it."""
        if not self.cut:
            return "finished"
        if not self.call:
            return "cut text"
        return "cut call that parses" if self.parses else "cut call"


def _arguments(path: str, body) -> str | None:
    if not isinstance(body, dict):
        return None
    if path == RESPONSES_PATH:
        calls = [item for item in body.get("output") or [] if item.get("type") == "function_call"]
        return calls[0].get("arguments") if calls else None
    if path == CHAT_PATH:
        message = (body.get("choices") or [{}])[0].get("message") or {}
        calls = message.get("tool_calls") or []
        return calls[0]["function"].get("arguments") if calls else None
    uses = [block for block in body.get("content") or [] if block.get("type") == "tool_use"]
    return json.dumps(uses[0].get("input")) if uses else None


def recorded(scenario: Scenario) -> Recorded:
    """The facts of a scenario's first reply, read from its non-streamed recordings."""
    for path in (RESPONSES_PATH, CHAT_PATH, MESSAGES_PATH):
        found = scenario.find("POST", path, stream=False)
        if found is not None:
            return Recorded(bool(scenario.stopped_by_limit()), _arguments(path, found.body_json))
    raise ValueError(f"{scenario.name} has no non-streamed reply to read")


@dataclass(frozen=True)
class OutcomeClass:
    """One class: its ``name`` (the legend's and the words'), the ``mark`` drawn in its cells (for
    a reader who does not tell the colours apart), its ``colour``, when it ``applies``, and
    ``short``, the few words of a cell in the matrix's per-server tables."""

    name: str
    short: str
    mark: str
    colour: str
    meaning: str
    applies: Callable[[dict, Recorded], bool]
    harm: bool = False  # a cut call or reply taken for a whole one: what a client author looks for


def _ran(line: dict, reply: Recorded) -> bool:
    return line["tool"].startswith("ran ")


def _repaired(line: dict, reply: Recorded) -> bool:
    return reply.call and not reply.parses and bool(HANDED_PARSED.search(line["tool"]))


def _noticed(line: dict, reply: Recorded) -> bool:
    says = line["says"]
    return bool(CUT_SAID.search(says)) or (says.startswith("raises ") and "incomplete" in says.lower())


def _asked_again(line: dict) -> bool:
    """The client sent a later turn that no recording answers: its error is mockllama's 404, not
    what it made of this reply, so the call is judged by what became of the tool."""
    return len(line["reached"]) > 1 and line["reached"][-1][0] == 404


def _raised(line: dict, reply: Recorded) -> bool:
    return line["says"].startswith("raises ") and not _asked_again(line)


def _refused(line: dict, reply: Recorded) -> bool:
    return reply.call and (line["tool"] in SET_ASIDE or "invalid_tool_calls" in line["tool"])


# In order: the first that applies is the outcome. The first three are judged only for a cut reply.
CUT_OUTCOMES = (
    OutcomeClass(
        "ran the cut call",
        "runs the cut call",
        "R",
        "#d55e00",
        "an agent ran write_file with the cut arguments",
        _ran,
        True,
    ),
    OutcomeClass(
        "handed over a repaired call",
        "repairs the cut call",
        "P",
        "#e69f00",
        "arguments that do not parse handed over as a valid call",
        _repaired,
        True,
    ),
    OutcomeClass(
        "noticed the cut",
        "sees the cut",
        "N",
        "#009e73",
        "a field it hands over, or what it raised, says cut",
        _noticed,
    ),
)
OUTCOMES = (
    *CUT_OUTCOMES,
    OutcomeClass("raised", "raises", "E", "#cc79a7", "raised an error that does not say cut", _raised),
    OutcomeClass(
        "refused the call", "refuses the call", "X", "#56b4e9", "set the call aside without saying cut", _refused
    ),
    OutcomeClass(
        "took the cut for whole",
        "trusts the cut",
        "W",
        "#f0e442",
        "handed over the cut reply or call as if it had finished",
        lambda line, reply: reply.cut,
        True,
    ),
    OutcomeClass(
        "finished", "reads it", "F", "#d9d9d9", "the reply was not cut, and it handed it over", lambda line, reply: True
    ),
)


def classify(line: dict, reply: Recorded) -> OutcomeClass:
    """The first class that applies to what ``line`` shows of a call that reached ``reply``."""
    for outcome in OUTCOMES:
        if (reply.cut or outcome not in CUT_OUTCOMES) and outcome.applies(line, reply):
            return outcome
    raise AssertionError("the last class applies to every line")
