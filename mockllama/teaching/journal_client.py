"""Reading a running mockllama's journal over HTTP, for ``mockllama explain --journal URL``.

The URL may name any server, and what comes back is untrusted: it is read as ``check`` reads a
server under test (``wire.untrusted_http``: one deadline for the whole fetch, the same size cap),
and every field that ``explain.journal_lines`` prints is checked before it is used. Anything else
is a ``JournalUnreadable`` with a one-line reason (the CLI exits 2); ``explain`` only renders
what this module returns.
"""

from __future__ import annotations

import json
import time

from mockllama.wire.untrusted_http import ExchangeFailed, Target, fetch

JOURNAL_PATH = "/_mockllama/journal"
DEFAULT_JOURNAL_TIMEOUT = 10.0
# The fields journal_lines reads, with their types: anything else is not a mockllama journal.
_ENTRY_FIELDS: dict[str, type | tuple[type, ...]] = {
    "id": int,
    "time": (int, float),
    "method": str,
    "path": str,
    "status": int,
    "behaviour": str,
    "stream": bool,
    "finished": bool,
    "bytes_sent": int,
}
_ENTRY_OPTIONAL = ("scenario", "selected_by", "fault", "error")  # a string or null


class JournalUnreadable(Exception):
    """The journal cannot be read or is not a mockllama journal; the message says why, in one line."""


def _get(target: Target, path: str, timeout: float, deadline: float) -> bytes:
    """GET ``path`` as ``check`` sends its probes (check.fetch): what is left of one deadline, of
    ``timeout`` seconds in all, for the whole exchange, and no reply read past ``check``'s cap, so a
    server that drips or never stops is cut off all the same."""
    try:
        reply = fetch(target, "GET", path, timeout=timeout, deadline=deadline)
    except ExchangeFailed as err:
        raise JournalUnreadable(str(err)) from None
    if reply.status != 200:
        raise JournalUnreadable(f"GET {JOURNAL_PATH} answered HTTP {reply.status}")
    return reply.body


def _journal(payload: bytes) -> dict:
    """The journal's JSON, checked for every field ``journal_lines`` reads."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        raise JournalUnreadable("the answer is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise JournalUnreadable('the answer is not a mockllama journal (no "entries" list)')
    last_id = data.get("last_id")
    if not isinstance(last_id, int) or isinstance(last_id, bool) or last_id < 0:
        raise JournalUnreadable('the answer is not a mockllama journal (no "last_id" number)')
    for number, entry in enumerate(data["entries"], start=1):
        problem = _entry_problem(entry)
        if problem:
            raise JournalUnreadable(f"the answer is not a mockllama journal (entry {number}: {problem})")
    return data


def _entry_problem(entry) -> str | None:
    if not isinstance(entry, dict):
        return "not an object"
    for name, kind in _ENTRY_FIELDS.items():
        value = entry.get(name)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            return f"no {name!r} of the right type"
    if not 0 <= entry["time"] < 2**33:  # a date a clock can show (1e999 is inf in JSON as Python reads it)
        return "'time' is not a date"
    for name in _ENTRY_OPTIONAL:
        if not isinstance(entry.get(name), (str, type(None))):
            return f"{name!r} is not a string or null"
    return None


def fetch_journal(url: str, last: int, timeout: float = DEFAULT_JOURNAL_TIMEOUT) -> list[dict]:
    """The last ``last`` entries of a running mockllama's journal (``url`` is its root), within
    ``timeout`` seconds in all. Asks first for no entry, only to learn the last id, then for the
    entries after ``last_id - last``: the reply stays small however large the journal is."""
    try:
        target = Target.parse(url)
    except ValueError as err:
        raise JournalUnreadable(str(err)) from None
    if not last:
        return []
    deadline = time.monotonic() + timeout
    newest = _journal(_get(target, f"{JOURNAL_PATH}?since={2**53}", timeout, deadline))["last_id"]
    entries = _journal(_get(target, f"{JOURNAL_PATH}?since={max(newest - last, 0)}", timeout, deadline))["entries"]
    return entries[-last:]
