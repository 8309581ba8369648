"""Verdicts: each aspect of a probe's reply judged on its own, for a reply that was cut and for one
that finished, and a probe's verdict from its aspects; on ``/v1/responses`` and on
``/v1/chat/completions``.

An aspect is ``dishonest`` when it says the opposite of what happened, ``honest`` when it says
what an honest server says, ``wrong`` when it does neither, and ``not applicable`` when the
reply has nothing it could say it in. The usage (``usage.output_tokens``,
``usage.completion_tokens``) is judged beside the aspects: no verdict rests on it.

What happened is read off a chat completion (``shows_cut``, ``shows_finished``): the Responses
probe's chat twin, or the chat probe's own reply. A cut shows as ``finish_reason: "length"``, a
usage that reaches ``max_tokens`` (the usage fallback: the probes' cut requests cannot finish
inside their limit, so a ``"stop"`` there is no finish) or a tool call whose arguments do not
parse; a finish as a ``finish_reason`` that says so, with no usage at the limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

from mockllama.behaviours.variants.chat import tool_choice
from mockllama.behaviours.variants.signals import ABSENT
from mockllama.check.reading import (
    ChatSeen,
    Seen,
    StreamEvent,
    _event_names,
    _function_calls,
    _parses,
    _reasoning_items,
)
from mockllama.check.variants import CHAT_VARIANTS, VARIANTS, chat_named, fits, fits_chat
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH

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
    "finish_reason": "finish_reason",  # /v1/chat/completions
}
NOT_APPLICABLE = "not applicable"
# What the report calls the usage judgement, beside the aspects: it is no aspect, and no verdict rests on it.
LABELS = {**ASPECTS, "usage_fallback": "usage fallback"}


# --- Judging a cut reply, aspect by aspect ---


@dataclass
class Aspect:
    """One aspect of a reply, judged on its own.

    Attributes:
        name: Which aspect: on `/v1/responses` `status`, `incomplete_details.reason`,
            `cut_item.status` (`items.status` for a reply that finished), `completed_at`,
            `terminal_event` or `function_call_arguments.done`; on `/v1/chat/completions`
            `finish_reason`.
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


def _judge(seen: Seen, twin: ChatSeen, probe: str) -> tuple[str, str, list[Aspect], list[str]]:
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
    cut = shows_cut(twin)
    if cut is None:
        return (
            "unknown",
            (
                f"the chat twin says {_twin_said(twin)}, and nothing in it shows a cut: the reply finished "
                "inside the limit, so this probe proves nothing"
            ),
            [],
            [],
        )
    aspects = judge_aspects(seen)
    verdict, reason = _weigh(
        aspects,
        lie=f"the chat twin shows a cut ({cut}) but the reply is reported as finished by",
        wrongly="not reported as finished, but not fully as cut either",
        honest="reported as 'incomplete' with reason 'max_output_tokens'",
    )
    # A known variant explains what is wrong with a reply: an honest one names none (LiteLLM's cut
    # text carries exactly what a correct server sends, as check reads it).
    variants = [str(variant) for variant in VARIANTS if fits(variant, seen)] if verdict != "honest" else []
    return verdict, reason, aspects, variants


def _judge_finished(seen: Seen, twin: ChatSeen) -> tuple[str, str, list[Aspect]]:
    """The verdict on a request with room to finish: a status that says 'incomplete' there too
    tells a client nothing."""
    finish = shows_finished(twin)
    if finish is None:
        return (
            "unknown",
            (
                f"the chat twin says {_twin_said(twin)}, and nothing in it shows a finish: the request "
                "with room to finish did not finish, so it proves nothing"
            ),
            [],
        )
    aspects = judge_finished(seen)
    verdict, reason = _weigh(
        aspects,
        lie=f"the chat twin shows a finish ({finish}) but the reply is reported as cut by",
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


@dataclass(frozen=True)
class Words:
    """How the report speaks of one endpoint's replies."""

    limit: str  # the request's output limit
    tokens: str  # the usage field counting the output, the fallback signal
    signal: str  # what a client reads first
    honest: str  # a cut reply reported honestly, in words


WORDS = {
    RESPONSES_PATH: Words(
        "max_output_tokens", "output_tokens", "status", "reported as 'incomplete' (reason 'max_output_tokens')"
    ),
    CHAT_PATH: Words("max_tokens", "completion_tokens", "finish_reason", "reported as finish_reason 'length'"),
}


def below_the_limit(words: Words) -> str:
    """Why a usage below the limit is gone, told apart in the summary from a usage that is no number."""
    return f"the one fallback signal where the {words.signal} lies: the usage does not show the cut either"


def _number(value) -> TypeGuard[int | float]:
    """A number as JSON writes one: true and false are not."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _usage_fallback(tokens, limit, words: Words) -> Aspect:
    """Where the signal a client reads first lies, the usage reaching the limit is the one signal
    of the cut it has left (the reference client's usage rule). A number is compared as one
    whatever JSON wrote it as: 8.0 is at a limit of 8, as it is for a client."""
    name, gone = "usage_fallback", f"the one fallback signal where the {words.signal} lies"
    if tokens is ABSENT or tokens is None:
        return Aspect(name, "gone", f"no usage.{words.tokens}", gone)
    if not _number(tokens) or not isinstance(limit, int):
        return Aspect(name, "gone", f"{words.tokens}={tokens!r:.40} is not a number", gone)
    if tokens >= limit:
        return Aspect(
            name,
            "kept",
            f"{words.tokens}={tokens} reaches {words.limit}={limit}",
            f"a client can tell the cut from the usage where the {words.signal} lies",
        )
    return Aspect(name, "gone", f"{words.tokens}={tokens} is below {words.limit}={limit}", below_the_limit(words))


def _judge_usage(response: dict, limit) -> Aspect:
    """The usage fallback of a cut Responses reply: usage.output_tokens reaching max_output_tokens."""
    return _usage_fallback((response.get("usage") or {}).get("output_tokens", ABSENT), limit, WORDS[RESPONSES_PATH])


def _judge_chat_usage(seen: ChatSeen) -> Aspect | None:
    """The usage fallback of a cut chat reply: usage.completion_tokens reaching max_tokens. None for
    a stream that sent no usage: it sends one only when asked (``stream_options``), and the
    recorded requests do not ask."""
    if seen.stream and seen.completion_tokens is ABSENT:
        return None
    return _usage_fallback(seen.completion_tokens, seen.limit, WORDS[CHAT_PATH])


# --- What a chat completion shows of how generation ended ---


def _twin_said(seen: ChatSeen) -> str:
    said = f"finish_reason={seen.finish_reason!r}"
    if seen.completion_tokens is not ABSENT:
        said += f" with completion_tokens={seen.completion_tokens!r:.40} (max_tokens={seen.limit})"
    return said


def shows_cut(seen: ChatSeen) -> str | None:
    """What in a chat completion shows that generation was cut at max_tokens, in words, or None:
    ``finish_reason: "length"``, a usage that reaches the limit (the usage fallback), or a tool
    call whose arguments do not parse as JSON (a call that finished parses). A reply that stops in
    exactly its limit says ``"stop"`` at the limit too (the ``text-exact-limit`` recording): the
    probes' cut requests cannot finish inside their limit, so there it is read as a cut."""
    if seen.finish_reason == "length":
        return "finish_reason 'length'"
    tokens, limit = seen.completion_tokens, seen.limit
    if _number(tokens) and isinstance(limit, int) and tokens >= limit:
        return f"completion_tokens={tokens} at max_tokens={limit}"
    if any(isinstance(arguments, str) and not _parses(arguments) for arguments in seen.arguments):
        return "a tool call whose arguments do not parse as JSON"
    return None


def shows_finished(seen: ChatSeen) -> str | None:
    """What in a chat completion shows that generation finished inside max_tokens, in words, or
    None: a finish_reason of 'stop' or 'tool_calls' with no usage at the limit. 'length' below the
    limit shows no finish: generation may have run out of context, which a server reports so too."""
    tokens, limit = seen.completion_tokens, seen.limit
    if seen.finish_reason not in FINISHED_REASONS:
        return None
    if not _number(tokens) or not isinstance(limit, int):
        return f"finish_reason {seen.finish_reason!r}"
    return (
        f"finish_reason {seen.finish_reason!r}, completion_tokens={tokens} below max_tokens={limit}"
        if tokens < limit
        else None
    )


# --- Judging a chat completion ---


def _judge_cut_finish_reason(seen: ChatSeen) -> Aspect:
    reason, name = seen.finish_reason, "finish_reason"
    if reason == "length":
        return Aspect(name, "honest", repr(reason), "the reply was cut at max_tokens")
    if reason == "tool_calls":
        why = "a client that trusts finish_reason runs the cut call" if seen.arguments else "says the reply finished"
        return Aspect(name, "dishonest", repr(reason), why)
    if reason == "stop":
        return Aspect(name, "dishonest", repr(reason), "says the reply finished")
    seen_as = "absent" if reason is None else repr(reason)
    return Aspect(name, "wrong", seen_as, "must be 'length': a client that checks for it misses the cut")


def _judge_finished_finish_reason(seen: ChatSeen) -> Aspect:
    reason, name = seen.finish_reason, "finish_reason"
    if reason in FINISHED_REASONS:
        return Aspect(name, "honest", repr(reason), "the reply finished, and says so")
    if reason == "length":
        return Aspect(name, "dishonest", repr(reason), "says a reply that finished inside its limit was cut")
    seen_as = "absent" if reason is None else repr(reason)
    return Aspect(name, "wrong", seen_as, "a reply that finished says 'stop' or 'tool_calls'")


def _judge_chat(seen: ChatSeen, request: dict) -> tuple[str, str, list[Aspect], list[str]]:
    """A chat probe's verdict on a reply its request cannot finish, its reason, the aspects judged
    and the servers whose chat-side signals it carries."""
    cut = shows_cut(seen)
    if cut is None:
        return (
            "unknown",
            (
                f"the reply says {_twin_said(seen)}, and nothing in it shows a cut: it finished inside the "
                "limit, so this probe proves nothing"
            ),
            [],
            [],
        )
    aspects = [_judge_cut_finish_reason(seen)]
    choice = tool_choice(request)
    variants = [chat_named(variant) for variant in CHAT_VARIANTS if fits_chat(variant, seen, choice)]
    verdict, reason = _weigh(
        aspects,
        lie=f"the reply shows a cut ({cut}) but is reported as finished by",
        wrongly="not reported as finished, but not as cut either",
        honest="reported as 'length'",
    )
    return verdict, reason, aspects, variants


def _judge_chat_finished(seen: ChatSeen) -> tuple[str, str, list[Aspect]]:
    """A chat probe's verdict on a reply with room to finish: 'length' there tells a client nothing."""
    finish = shows_finished(seen)
    if finish is None:
        return (
            "unknown",
            (
                f"the reply says {_twin_said(seen)}, and nothing in it shows a finish: the request with room "
                "to finish did not finish, so it proves nothing"
            ),
            [],
        )
    aspects = [_judge_finished_finish_reason(seen)]
    verdict, reason = _weigh(
        aspects,
        lie=f"the reply shows a finish ({finish}) but is reported as cut by",
        wrongly="reported as finished, but wrongly",
        honest="reported as finished",
    )
    return verdict, reason, aspects
