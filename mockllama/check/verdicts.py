"""Verdicts: each aspect of a probe's reply judged on its own, for a reply that was cut and for one
that finished, and a probe's verdict from its aspects.

An aspect is ``dishonest`` when it says the opposite of what happened, ``honest`` when it says
what an honest server says, ``wrong`` when it does neither, and ``not applicable`` when the
reply has nothing it could say it in. ``usage.output_tokens`` is judged beside the aspects: no
verdict rests on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockllama.behaviours.variants.signals import ABSENT
from mockllama.check.reading import (
    Seen,
    StreamEvent,
    _event_names,
    _function_calls,
    _reasoning_items,
)
from mockllama.check.variants import VARIANTS, fits

# The chat twin's finish_reason for a reply that finished inside its limit.
FINISHED_REASONS = ("stop", "tool_calls")
# What each aspect is called in the report, in the order it is judged.
ASPECTS = {
    "status": "status",
    "incomplete_details.reason": "incomplete_details.reason",
    "cut_item.status": "cut item status",
    "items.status": "item status",
    "completed_at": "completed_at",
    "terminal_event": "terminal event",
    "function_call_arguments.done": "function_call_arguments.done",
}
NOT_APPLICABLE = "not applicable"
# What the report calls the usage judgement, beside the aspects: it is no aspect, and no verdict rests on it.
LABELS = {**ASPECTS, "usage_fallback": "usage fallback"}


# --- Judging a cut reply, aspect by aspect ---


@dataclass
class Aspect:
    """One aspect of a reply, judged on its own.

    Attributes:
        name: Which aspect: `status`, `incomplete_details.reason`, `cut_item.status`,
            `completed_at`, `terminal_event` or `function_call_arguments.done`.
        verdict: `honest` (it reports the reply as it was), `dishonest` (it says a cut reply
            finished, or a finished one was cut), `wrong` (neither: missing, or another value) or
            `not applicable` (the reply has nothing it could say it in).
        seen: What the reply said.
        why: Why that earns the verdict.
    """

    name: str
    verdict: str  # honest, dishonest, wrong, not applicable
    seen: str
    why: str

    @property
    def line(self) -> str:
        return f"  {self.verdict:<9} {LABELS[self.name]}: {self.seen} ({self.why})"


def _judge_status(response: dict) -> Aspect:
    status = response.get("status")
    if status == "incomplete":
        return Aspect("status", "honest", repr(status), "the reply was cut")
    if status == "completed":
        return Aspect("status", "dishonest", repr(status), "says the reply finished")
    if status is None:
        return Aspect(
            "status", "dishonest", "null", "a client that checks status == 'incomplete' takes the reply as finished"
        )
    return Aspect("status", "wrong", repr(status), "neither 'incomplete' nor 'completed'")


def _judge_reason(response: dict) -> Aspect:
    details = response.get("incomplete_details", ABSENT)
    name = "incomplete_details.reason"
    if details is ABSENT or details is None:
        seen = "absent" if details is ABSENT else "incomplete_details is null"
        return Aspect(name, "wrong", seen, "nothing says the reply was cut at max_output_tokens")
    reason = details.get("reason")
    if reason == "max_output_tokens":
        return Aspect(name, "honest", repr(reason), "names the limit that cut the reply")
    return Aspect(
        name,
        "wrong",
        repr(reason),
        "must be 'max_output_tokens', the limit that cut the reply: a client that checks for it misses the cut",
    )


def _judge_cut_item(response: dict) -> Aspect:
    """The cut falls in the last item (the one being generated); an item before it finished,
    and may say so."""
    name = "cut_item.status"
    output = response.get("output") or []
    if not output:
        return Aspect(name, NOT_APPLICABLE, "no output item", "the reply holds no item that could be cut")
    item = output[-1]
    kind, status = item.get("type"), item.get("status", ABSENT)
    seen = f"the last item ({kind!r}) says " + ("nothing" if status is ABSENT else repr(status))
    if status == "incomplete":
        return Aspect(name, "honest", seen, "the item being generated was cut")
    if status == "completed":
        return Aspect(name, "dishonest", seen, "says the item being generated finished")
    return Aspect(name, "wrong", seen, "neither 'incomplete' nor 'completed'")


def _judge_completed_at(response: dict) -> Aspect:
    value = response.get("completed_at", ABSENT)
    if value is ABSENT or value is None:
        return Aspect(
            "completed_at", "honest", "absent" if value is ABSENT else "null", "no completion time is claimed"
        )
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Aspect("completed_at", "dishonest", repr(value), "a completion time for a reply that did not complete")
    return Aspect("completed_at", "wrong", f"{value!r:.40}", "neither null nor a time")


def _shown(event: StreamEvent) -> str:
    if event.text is not None:
        return f"event: {event.name!r} with data {event.text!r:.40}"
    kind = event.data.get("type")
    return repr(kind) if _event_names(event) == {kind} else f"event: {event.name!r} with type {kind!r}"


def _several_terminals(seen: Seen, lie: str, says: str) -> Aspect | None:
    """More than one terminal event: never honest. Dishonest when one of them is ``lie``, the
    event that misreports this reply, for a client that stops at the first or reads to the last."""
    if len(seen.terminals) < 2:
        return None
    shown = f"{len(seen.terminals)} terminal events: " + ", then ".join(_shown(e) for e in seen.terminals)
    why = "a stream has exactly one terminal event"
    if lie in _event_names(seen.terminals[0]):
        return Aspect("terminal_event", "dishonest", shown, f"{why}; a client that stops at the first {says}")
    if any(lie in _event_names(event) for event in seen.terminals[1:]):
        return Aspect("terminal_event", "dishonest", shown, f"{why}; a client that reads to the last {says}")
    return Aspect("terminal_event", "wrong", shown, why)


def _judge_terminal(seen: Seen, cut: bool = True) -> Aspect:
    """The stream's one terminal event: response.incomplete for a cut reply, response.completed for
    one that finished; the other one is a lie a client that switches on the event type believes."""
    name = "terminal_event"
    if seen.terminal is None:
        return Aspect(name, NOT_APPLICABLE, "not a stream", "only a stream has one")
    right, lie = ("response.incomplete", "response.completed") if cut else ("response.completed", "response.incomplete")
    believed = "takes the reply as finished" if cut else "takes the finished reply as cut"
    several = _several_terminals(seen, lie, believed)
    if several is not None:
        return several
    names, shown, kind = _event_names(seen.terminal), _shown(seen.terminal), "a cut" if cut else "a finished"
    if lie in names:
        why = f"a client that switches on the event type {believed}"
        if cut and seen.response.get("status") == "incomplete":
            shown += " carrying a response whose status is 'incomplete'"
            why += " (the hybrid terminal event)"
        return Aspect(name, "dishonest", shown, why)
    if names == {right}:
        return Aspect(name, "honest", shown, f"the stream ends as {kind} reply's stream does")
    return Aspect(name, "wrong", shown, f"{kind} stream ends with {right}")


def _judge_arguments_done(seen: Seen) -> Aspect:
    name = "function_call_arguments.done"
    output = seen.response.get("output") or []
    if seen.terminal is None:
        return Aspect(name, NOT_APPLICABLE, "not a stream", "only a stream sends it")
    if not output or output[-1].get("type") != "function_call":
        return Aspect(name, NOT_APPLICABLE, "no cut function call", "only a cut call needs it")
    call = output[-1]
    if call.get("id") not in seen.arguments_done:
        return Aspect(
            name,
            "wrong",
            f"none for the cut call {call.get('id')!r}",
            "the streaming protocol sends it for every call, cut or finished",
        )
    sent = seen.arguments_done[call.get("id")]
    if sent != call.get("arguments"):
        return Aspect(
            name,
            "wrong",
            f"{sent!r:.60} against the item's {call.get('arguments')!r:.60}",
            "it carries other arguments than the call",
        )
    return Aspect(
        name,
        "honest",
        f"sent for the cut call, with its arguments {sent!r:.60}",
        "the cut call's arguments as generated",
    )


def _judge_finished_status(response: dict) -> Aspect:
    status = response.get("status")
    if status == "completed":
        return Aspect("status", "honest", repr(status), "the reply finished, and says so")
    if status == "incomplete":
        return Aspect("status", "dishonest", repr(status), "says a reply that finished inside its limit was cut")
    return Aspect(
        "status", "wrong", "null" if status is None else repr(status), "a reply that finished says 'completed'"
    )


def _judge_finished_reason(response: dict) -> Aspect:
    details = response.get("incomplete_details", ABSENT)
    name = "incomplete_details.reason"
    if details is ABSENT or details is None:
        return Aspect(name, "honest", "absent" if details is ABSENT else "null", "no reason to be cut is given")
    return Aspect(
        name,
        "dishonest",
        f"{details!r:.80}",
        "a client that reads incomplete_details takes the reply as cut, whatever the status says",
    )


def _judge_finished_items(response: dict) -> Aspect:
    """Every item of a reply that finished finished: one that says 'incomplete' is a cut to a
    client that reads the items, as the reference client does."""
    name = "items.status"
    output = response.get("output") or []
    if not output:
        return Aspect(name, NOT_APPLICABLE, "no output item", "the reply holds no item that could say it")
    statuses = [item.get("status", ABSENT) for item in output]
    odd = [(n, status) for n, status in enumerate(statuses) if status != "completed"]
    if not odd:
        return Aspect(name, "honest", "every item says 'completed'", "every item finished, and says so")
    cut = next(((n, status) for n, status in odd if status == "incomplete"), None)
    n, status = cut or odd[0]
    seen = f"item {n + 1} of {len(output)} ({output[n].get('type')!r}) says " + (
        "nothing" if status is ABSENT else repr(status)
    )
    if cut is not None:
        return Aspect(name, "dishonest", seen, "says an item of a reply that finished was cut")
    return Aspect(name, "wrong", seen, "an item that finished says 'completed'")


def _judge_finished_completed_at(response: dict) -> Aspect:
    """A time, or none: llama-server's streams never carry one, and no client reads a cut from
    its absence. Anything else is no time at all."""
    value = response.get("completed_at", ABSENT)
    if value is ABSENT or value is None:
        return Aspect("completed_at", "honest", "absent" if value is ABSENT else "null", "no cut is read from it")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Aspect("completed_at", "honest", repr(value), "a completion time for a reply that completed")
    return Aspect("completed_at", "wrong", f"{value!r:.40}", "neither null nor a time")


def _judge_finished_arguments_done(seen: Seen) -> Aspect:
    """Every call of a finished stream gets its arguments.done, with its arguments."""
    name = "function_call_arguments.done"
    if seen.terminal is None:
        return Aspect(name, NOT_APPLICABLE, "not a stream", "only a stream sends it")
    calls = _function_calls(seen.response)
    if not calls:
        return Aspect(name, NOT_APPLICABLE, "no function call", "only a call needs it")
    for call in calls:
        if call.get("id") not in seen.arguments_done:
            return Aspect(
                name,
                "wrong",
                f"none for the call {call.get('id')!r}",
                "the streaming protocol sends it for every call, cut or finished",
            )
        if seen.arguments_done[call.get("id")] != call.get("arguments"):
            return Aspect(
                name,
                "wrong",
                f"{seen.arguments_done[call.get('id')]!r:.60} against the item's {call.get('arguments')!r:.60}",
                "it carries other arguments than the call",
            )
    return Aspect(name, "honest", f"sent for every call ({len(calls)}), with its arguments", "every call finished")


def judge_finished(seen: Seen) -> list[Aspect]:
    """The aspects of a reply that finished inside its limit, each judged on its own: none may
    say it was cut, for a client may read any of them."""
    response = seen.response
    return [
        _judge_finished_status(response),
        _judge_finished_reason(response),
        _judge_finished_items(response),
        _judge_finished_completed_at(response),
        _judge_terminal(seen, cut=False),
        _judge_finished_arguments_done(seen),
    ]


def judge_aspects(seen: Seen) -> list[Aspect]:
    """Every aspect of a reply cut at max_output_tokens, each judged on its own."""
    response = seen.response
    return [
        _judge_status(response),
        _judge_reason(response),
        _judge_cut_item(response),
        _judge_completed_at(response),
        _judge_terminal(seen),
        _judge_arguments_done(seen),
    ]


def _listed(aspects: list[Aspect]) -> str:
    return ", ".join(f"{ASPECTS[aspect.name]} ({aspect.seen})" for aspect in aspects)


def _explained(aspects: list[Aspect]) -> str:
    """Each aspect with what it said and what is wrong with that, once, in the order judged."""
    first: dict[str, Aspect] = {}
    for aspect in aspects:
        first.setdefault(aspect.name, aspect)
    return ", ".join(f"{ASPECTS[name]} ({first[name].seen}: {first[name].why})" for name in ASPECTS if name in first)


def _judge(seen: Seen, twin_reason: str | None, probe: str) -> tuple[str, str, list[Aspect], list[str]]:
    """The probe's verdict, its reason, the aspects judged and the variants they fit."""
    response = seen.response
    if probe == "reasoning" and not _reasoning_items(response):
        return (
            "unknown",
            (
                "the reply carries no reasoning item, so the server did not think and this probe cannot "
                "tell how it reports a cut inside reasoning (llama-server thinks only with a reasoning "
                "chat template, e.g. scripts/llama-server.sh run --setup smollm2-135m-forced-thinking)"
            ),
            [],
            [],
        )
    if twin_reason != "length":
        return (
            "unknown",
            (
                f"the chat twin says finish_reason={twin_reason!r}, not 'length': the reply finished "
                "inside the limit, so this probe proves nothing"
            ),
            [],
            [],
        )
    aspects = judge_aspects(seen)
    variants = [str(variant) for variant in VARIANTS if fits(variant, seen)]
    verdict, reason = _weigh(
        aspects,
        lie="the chat twin says 'length' but the reply is reported as finished by",
        wrongly="not reported as finished, but not fully as cut either",
        honest="reported as 'incomplete' with reason 'max_output_tokens'",
    )
    return verdict, reason, aspects, variants


def _judge_finished(seen: Seen, twin_reason: str | None) -> tuple[str, str, list[Aspect]]:
    """The verdict on a request with room to finish: a status that says 'incomplete' there too
    tells a client nothing."""
    if twin_reason not in FINISHED_REASONS:
        return (
            "unknown",
            (
                f"the chat twin says finish_reason={twin_reason!r}, not 'stop' or 'tool_calls': the request "
                "with room to finish did not finish, so it proves nothing"
            ),
            [],
        )
    aspects = judge_finished(seen)
    verdict, reason = _weigh(
        aspects,
        lie=f"the chat twin says {twin_reason!r} but the reply is reported as cut by",
        wrongly="reported as finished, but wrongly",
        honest="reported as 'completed'",
    )
    return verdict, reason, aspects


def _weigh(aspects: list[Aspect], lie: str, wrongly: str, honest: str) -> tuple[str, str]:
    """A reply's verdict from its aspects, and the reason: a lie first (with what else is wrong),
    then what is wrong, else honest."""
    dishonest = [a for a in aspects if a.verdict == "dishonest"]
    wrong = [a for a in aspects if a.verdict == "wrong"]
    if dishonest:
        return "dishonest", f"{lie}: {_listed(dishonest)}" + (f"; also wrong: {_listed(wrong)}" if wrong else "")
    if wrong:
        return "wrong", f"{wrongly}: {_explained(wrong)}"
    return "honest", honest


# Why a usage below the limit is gone, told apart in the summary from a usage that is no number.
_BELOW_THE_LIMIT = "the one fallback signal where the status lies: the usage does not show the cut either"


def _judge_usage(response: dict, limit) -> Aspect:
    """Where the status lies, usage.output_tokens reaching max_output_tokens is the one signal
    of the cut a client has left (the reference client's usage rule). A number is compared as
    one whatever JSON wrote it as: 8.0 is at a limit of 8, as it is for a client."""
    tokens = (response.get("usage") or {}).get("output_tokens", ABSENT)
    name = "usage_fallback"
    if tokens is ABSENT or tokens is None:
        return Aspect(name, "gone", "no usage.output_tokens", "the one fallback signal where the status lies")
    if isinstance(tokens, bool) or not isinstance(tokens, (int, float)) or not isinstance(limit, int):
        return Aspect(
            name,
            "gone",
            f"output_tokens={tokens!r:.40} is not a number",
            "the one fallback signal where the status lies",
        )
    if tokens >= limit:
        return Aspect(
            name,
            "kept",
            f"output_tokens={tokens} reaches max_output_tokens={limit}",
            "a client can tell the cut from the usage where the status lies",
        )
    return Aspect(name, "gone", f"output_tokens={tokens} is below max_output_tokens={limit}", _BELOW_THE_LIMIT)
