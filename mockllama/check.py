"""Does a server's /v1/responses report a reply cut off by max_output_tokens as cut off?

Each probe sends a request that cannot finish within its limit to ``/v1/responses``, and its twin
to ``/v1/chat/completions``, then compares. The requests are the bundled scenarios' own recorded
requests (``text-cut-8``, ``tool-cut-20``, from the recorder's catalogue), so mockllama answers
them and a real server gets exactly what was recorded. Use it from Python::

    report = mockllama.check.run("http://127.0.0.1:8080", probes=["text", "stream"])
    assert report.exit_code == 0, report.summary

When the twin says ``length``, each aspect of the cut reply is judged on its own (``ASPECTS``):
the response ``status``, ``incomplete_details.reason``, the cut output item's ``status``,
``completed_at``, and in a stream the terminal event and the cut call's
``response.function_call_arguments.done``. An aspect is ``dishonest`` when it says the reply
finished (a ``null`` status too: a client that checks ``status == "incomplete"`` reads it so),
``honest`` when it reports the cut as an honest server does, ``wrong`` when it does neither
(missing, or another value), and ``not applicable`` when the reply has nothing it could say it
in. A stream has exactly one terminal event; more than one is never honest. A stream is read as
the SDKs read it (``sse.read_events``: CR, LF or CRLF, up to ``[DONE]``), and a terminal event is
known by its ``event:`` line whatever its data.

A status is only worth checking if it can say both things, so each probe also sends a request
with room to finish (``FINISHING``: ``text-finishes``, ``tool-finishes``, ``thinking-finishes``)
and its twin, and judges that reply on the same aspects (``judge_finished``): ``completed``, no
``incomplete_details``, every item ``completed``, and in a stream one ``response.completed`` and
an arguments.done for every call. A server that says ``incomplete`` to every reply, or that says
``completed`` beside a reason to be cut, is dishonest the other way.

Verdicts: ``dishonest`` (exit 1) when any aspect of any probe is, in either direction; ``wrong``
(exit 1 too: the server reports a cut, but not as the Responses API does, and a client that
reads that field misses it) when an aspect is wrong and none dishonest; ``honest`` (exit 0) when
every aspect that applies is; otherwise ``unknown`` (exit 2: can't tell), with the reason. Where
the signals of a probe's cut reply are those another server writes (``VARIANTS``), the verdict
names that server. Where ``usage.output_tokens`` of a cut reply stays below the limit, the report
says that the one fallback signal a client has when the status lies is gone.

The ``reasoning`` probe asks the forced-thinking question (``thinking-cut-12``, from the
forced-thinking catalogue): a reply cut while the model is still thinking. It can only judge a
server that answers with a reasoning item; a reply without one is ``unknown``, never ``honest``.

A reply is read as ``wire.untrusted_http`` reads any server it does not trust (``explain
--journal`` reads its journal so too): one deadline for the whole exchange, a cap on its size,
the URL's credentials sent and never printed; ``strict_json`` parses only what RFC 8259 accepts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import NamedTuple, cast

from mockllama.behaviours.variants import VARIANTS as DECLARED_VARIANTS
from mockllama.behaviours.variants.signals import (
    ABSENT,
    CALLS_WITH_A_DELTA,
    EVERY_CALL,
    SET,
    TERMINAL_EVENTS,
    Ending,
    Variant,
)
from mockllama.recordings.catalogue import load_catalogue
from mockllama.wire import sse
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from mockllama.wire.scrub import scrub_text
from mockllama.wire.terminal import printable
from mockllama.wire.untrusted_http import ExchangeFailed, Target, fetch

__all__ = ["run", "Report", "ProbeResult", "Aspect", "Observation"]

PROBES = ("text", "tool", "stream", "reasoning")
# "all": the probes every server can answer; reasoning needs a server that thinks, so it is asked for by name.
ALL_PROBES = ("text", "tool", "stream")
PROBE_SCENARIOS = {
    "text": ("text-cut-8",),
    "tool": ("tool-cut-20",),
    "stream": ("text-cut-8", "tool-cut-20"),
    "reasoning": ("thinking-cut-12",),
}
PROBE_CATALOGUES = {"reasoning": "forced-thinking"}
# Each cut scenario's twin with room to finish: the same kind of request, a limit it stays inside.
FINISHING = {"text-cut-8": "text-finishes", "tool-cut-20": "tool-finishes", "thinking-cut-12": "thinking-finishes"}
# The chat twin's finish_reason for a reply that finished inside its limit.
FINISHED_REASONS = ("stop", "tool_calls")
# A report's verdict is its worst probe's, in this order.
VERDICTS = ("dishonest", "wrong", "unknown", "honest")
# A wrong field is a fault found, as a lie is, not a doubt: a CI gate that lets "can't tell" pass must still fail it.
EXIT_CODES = {"honest": 0, "dishonest": 1, "wrong": 1, "unknown": 2}
# A cut-off reply is a few kilobytes; a server that sends this much is not answering the probe.
MAX_REPLY_BYTES = 8 * 1024 * 1024
# The server's answer can't be judged: unreachable, an HTTP error, not JSON, a timeout.
ProbeFailed = ExchangeFailed

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


# --- JSON as RFC 8259 has it ---


class StrictJSONError(ValueError):
    """JSON that Python's parser takes but RFC 8259 does not: NaN, Infinity, a number out of
    range, a key twice in one object."""


def _no_constant(name: str):
    raise StrictJSONError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"the number {text[:40]} is out of range")
    return value


def _unique_keys(pairs: list) -> dict:
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise StrictJSONError(f"the key {key[:40]!r} appears twice in one object")
        seen.add(key)
    return dict(pairs)


def strict_json(text: str | bytes):
    """The value of ``text`` if RFC 8259 accepts it; StrictJSONError for what it rejects and
    Python would take (so that no verdict rests on a key one parser reads first and another
    last); another ValueError for what is not JSON at all, or nested too deeply to read."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


# --- One probe: the requests, and what came back ---


class StreamEvent(NamedTuple):
    name: str | None  # the SSE `event:` line
    data: dict  # the JSON object it carries; empty where its data is none
    text: str | None = None  # the data as sent, where it is no JSON object: `[DONE]`, text


def _recorded_requests(probe: str, scenario: str, stream: bool, model: str | None) -> tuple[dict, dict]:
    """The Responses request and its chat twin as the recorder sent them. The catalogue, not the
    cassette, keeps their key order, which llama-server's prompt depends on."""
    catalogue = load_catalogue(PROBE_CATALOGUES.get(probe, "default"))
    entry = next(entry for entry in catalogue if entry.name == scenario)
    responses, chat = [p.json for p in entry.planned() if isinstance(p.json, dict) and p.json.get("stream") is stream]
    bodies = dict(responses), dict(chat)
    if model is not None:
        for body in bodies:
            body["model"] = model
    return bodies


def _post(target: Target, path: str, body: dict, timeout: float) -> bytes:
    reply = fetch(target, "POST", path, body, timeout=timeout, max_bytes=MAX_REPLY_BYTES)
    if reply.status != 200:
        raise ProbeFailed(f"POST {path} answered HTTP {reply.status}: {reply.body[:200].decode(errors='replace')!r}")
    return reply.body


def _rejected(path: str, err: StrictJSONError) -> ProbeFailed:
    return ProbeFailed(f"POST {path} answered JSON that RFC 8259 rejects ({err}), so no verdict can rest on it")


def _json(payload: bytes, path: str) -> dict:
    try:
        data = strict_json(payload)
    except StrictJSONError as err:
        raise _rejected(path, err) from None
    except ValueError:
        raise ProbeFailed(
            f"POST {path} answered something that is not JSON: {payload[:80].decode(errors='replace')!r}"
        ) from None
    if not isinstance(data, dict):
        raise ProbeFailed(f"POST {path} answered JSON that is not an object")
    return data


def _stream_events(payload: bytes, path: str) -> list[StreamEvent]:
    """The events of a stream as a client reads them (``sse.read_events``: CR, LF or CRLF, up to
    ``[DONE]``), each with its JSON object. Data that is no JSON object is kept only for an event
    named as a terminal event, which a client that switches on the event line takes as one."""
    try:
        read = sse.read_events(payload)
    except ValueError:  # UnicodeDecodeError
        raise ProbeFailed(f"POST {path} with stream=true answered events that are not UTF-8 JSON") from None
    events = []
    for event in read:
        try:
            data = strict_json(event.data)
        except StrictJSONError as err:
            raise _rejected(path, err) from None
        except ValueError:
            data = None  # not JSON at all: `[DONE]`, text
        if isinstance(data, dict):
            events.append(StreamEvent(event.name, data))
        elif event.name in TERMINAL_EVENTS:
            events.append(StreamEvent(event.name, {}, event.data))
    if not events:
        raise ProbeFailed(f"POST {path} with stream=true answered no JSON server-sent events")
    return events


def _function_calls(response: dict) -> list[dict]:
    return [item for item in response.get("output") or [] if item.get("type") == "function_call"]


def _response_object(response, path: str) -> dict:
    """A Responses object whose fields the verdict reads, or ProbeFailed saying what is wrong."""
    if not isinstance(response, dict):
        raise ProbeFailed(f"POST {path} answered a response that is not a JSON object")
    # A null status is a known variant (inspect_ai's), judged below; a missing one is no response object.
    if "status" not in response or not (response["status"] is None or isinstance(response["status"], str)):
        raise ProbeFailed(f'POST {path} answered a response without a "status" string')
    output = response.get("output") or []
    if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
        raise ProbeFailed(f'POST {path} answered an "output" that is not a list of objects')
    for key in ("usage", "incomplete_details"):
        if response.get(key) is not None and not isinstance(response[key], dict):
            raise ProbeFailed(f'POST {path} answered a "{key}" that is not an object')
    return response


def _choices(chunk: dict, path: str) -> list[dict]:
    choices = chunk.get("choices") or []
    if not isinstance(choices, list) or not all(isinstance(choice, dict) for choice in choices):
        raise ProbeFailed(f'POST {path} answered "choices" that are not a list of objects')
    return choices


def _reasoning_items(response: dict) -> list[dict]:
    return [item for item in response.get("output") or [] if item.get("type") == "reasoning"]


def _output_text(response: dict) -> str:
    """What the SDK's ``output_text`` gives: the text of the message items, reasoning left out."""
    return "".join(
        part.get("text") or ""
        for item in response.get("output") or []
        if item.get("type") == "message"
        for part in item.get("content") or []
        if part.get("type") == "output_text"
    )


def _parses(arguments) -> bool:
    try:
        json.loads(arguments)
        return True
    except (TypeError, ValueError):
        return False


def _finish_reason(chat: dict) -> str | None:
    choices = _choices(chat, CHAT_PATH) or [{}]
    return _reason(choices[0].get("finish_reason"))


def _stream_finish_reason(events: list[StreamEvent]) -> str | None:
    reasons = [c.get("finish_reason") for e in events for c in _choices(e.data, CHAT_PATH) if c.get("finish_reason")]
    return _reason(reasons[-1]) if reasons else None


def _reason(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ProbeFailed(f"POST {CHAT_PATH} answered a finish_reason that is not a string: {value!r:.80}")
    return value


def _is_terminal(event: StreamEvent) -> bool:
    return event.data.get("type") in TERMINAL_EVENTS or event.name in TERMINAL_EVENTS


@dataclass
class Seen:
    """The reply a probe judges: the response (in a stream, the one its last event carries),
    and for a stream that last event, every terminal event it sent, and the arguments each
    arguments.done event carried."""

    response: dict
    terminal: StreamEvent | None = None
    arguments_done: dict = field(default_factory=dict)  # item_id -> arguments
    terminals: tuple[StreamEvent, ...] = ()  # the events named or typed as a terminal event, in order


def seen_in_stream(events: list[StreamEvent], path: str = RESPONSES_PATH) -> Seen:
    """What a probe judges in a Responses stream: the response its last event carries, that
    event, every terminal event, and the arguments of each arguments.done. A last event with no
    JSON (``event: response.completed`` with ``data: [DONE]``, where the SDK stops) carries no
    response: the one judged is then the last the stream sent."""
    terminal, where = events[-1], path + " (its last event)"
    carrying = [e for e in events if e.text is None and isinstance(e.data.get("response"), dict)]
    if terminal.text is not None and carrying:
        terminal_response, where = carrying[-1].data["response"], path + " (the last event with a response)"
    else:
        terminal_response = terminal.data.get("response")
    done = {
        e.data.get("item_id"): e.data.get("arguments")
        for e in events
        if e.data.get("type") == "response.function_call_arguments.done"
    }
    return Seen(_response_object(terminal_response, where), terminal, done, tuple(e for e in events if _is_terminal(e)))


@dataclass
class Observation:
    """What one request of a probe got back: one line of the report.

    Attributes:
        endpoint: The path the request went to, `/v1/responses` or `/v1/chat/completions`.
        stream: Whether the request asked for a stream.
        limit: The request's output token limit.
        line: The line `mockllama check` prints for it.
        fields: What the reply said, by field: `status`, `finish_reason`, ...
    """

    endpoint: str
    stream: bool
    limit: int
    line: str
    fields: dict = field(default_factory=dict)


def _observe_responses(target, body, timeout, probe) -> tuple[Seen, Observation]:
    limit = body.get("max_output_tokens")
    head = f"{RESPONSES_PATH} max_output_tokens={limit}" + (" stream" if body.get("stream") else "")
    payload = _post(target, RESPONSES_PATH, body, timeout)
    if body.get("stream"):
        seen = seen_in_stream(_stream_events(payload, RESPONSES_PATH))
        response, terminal, done = seen.response, seen.terminal, seen.arguments_done
        assert terminal is not None  # seen_in_stream always has one
        calls = _function_calls(response)
        fields = {
            "terminal_event": terminal.data.get("type") if terminal.text is None else terminal.name,
            "status": response.get("status"),
            "incomplete_details": response.get("incomplete_details"),
            "function_calls": len(calls),
            "function_calls_with_arguments_done": sum(c.get("id") in done for c in calls),
        }
        line = (
            f"{head}: last event={fields['terminal_event']!r} status={fields['status']!r} "
            f"incomplete_details={fields['incomplete_details']!r}"
        )
        if calls:
            with_done = fields["function_calls_with_arguments_done"]
            line += f" function_call_arguments.done for {with_done} of {len(calls)} calls"
    else:
        response = _response_object(_json(payload, RESPONSES_PATH), RESPONSES_PATH)
        seen = Seen(response)
        fields = {
            "status": response.get("status"),
            "incomplete_details": response.get("incomplete_details"),
            "output_tokens": (response.get("usage") or {}).get("output_tokens"),
        }
        line = f"{head}: status={fields['status']!r} incomplete_details={fields['incomplete_details']!r}"
        if probe == "reasoning":
            items = _reasoning_items(response)
            fields |= {
                "reasoning_items": len(items),
                "reasoning_status": items[-1].get("status") if items else None,
                "output_text": _output_text(response),
            }
            line += (
                f" reasoning item status={fields['reasoning_status']!r} output_text={fields['output_text']!r}"
                if items
                else " (no reasoning item)"
            )
        if probe == "tool":
            call = (_function_calls(response) or [{}])[-1]
            fields |= {
                "function_call_status": call.get("status"),
                "arguments": call.get("arguments"),
                "arguments_parse": _parses(call.get("arguments")),
            }
            line += (
                f" function_call status={fields['function_call_status']!r} arguments="
                f"{fields['arguments']!r} ({'parse' if fields['arguments_parse'] else 'do not parse'} as JSON)"
            )
        line += f" output_tokens={fields['output_tokens']}"
    return seen, Observation(RESPONSES_PATH, bool(body.get("stream")), limit, line, fields)


def _observe_chat(target, body, timeout) -> Observation:
    limit = body.get("max_tokens")
    payload = _post(target, CHAT_PATH, body, timeout)
    if body.get("stream"):
        reason = _stream_finish_reason(_stream_events(payload, CHAT_PATH))
    else:
        reason = _finish_reason(_json(payload, CHAT_PATH))
    head = f"{CHAT_PATH} max_tokens={limit}" + (" stream" if body.get("stream") else "")
    return Observation(
        CHAT_PATH, bool(body.get("stream")), limit, f"{head}: finish_reason={reason!r}", {"finish_reason": reason}
    )


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


def _event_names(event: StreamEvent) -> set:
    """What a client may switch on: the JSON type, and the SSE event line where there is one."""
    return {event.data.get("type")} | ({event.name} if event.name is not None else set())


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


# The servers whose way of reporting a reply's end is known, each declared once beside its
# behaviour (mockllama/behaviours/variants/, citing that server's source). A probe names those whose
# signals its cut reply carries, every one of them: on one probe, two servers may look the same.
VARIANTS = DECLARED_VARIANTS


def _says(value, declared) -> bool:
    """Whether a field's value (ABSENT when the key is missing) is what a declaration says."""
    if declared is SET:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return value is declared if declared is ABSENT or value is ABSENT else value == declared


def fits(variant: Variant, seen: Seen) -> bool:
    """Whether a cut reply carries exactly the signals ``variant``'s server writes for one."""
    stream = seen.terminal is not None
    ending = cast(Ending, (variant.stream if stream else variant.body).cut)  # a Both of Ending
    response = seen.response
    if not all(
        _says(response.get(key, ABSENT), declared)
        for key, declared in (
            ("status", ending.status),
            ("incomplete_details", ending.incomplete_details),
            ("completed_at", ending.completed_at),
        )
    ):
        return False
    output = response.get("output") or []
    cut = output[-1] if output else {}
    if cut.get("type") in ending.items and not _says(cut.get("status", ABSENT), ending.items[cut["type"]]):
        return False
    if seen.terminal is None:  # not a stream
        return True
    if len(seen.terminals) != 1 or _event_names(seen.terminal) != {variant.terminal.cut}:
        return False
    if cut.get("type") == "function_call" and variant.arguments_done != CALLS_WITH_A_DELTA:
        return (cut.get("id") in seen.arguments_done) is (variant.arguments_done == EVERY_CALL)
    return True


@dataclass
class ProbeResult:
    """One probe's request and its verdict, for one scenario.

    Attributes:
        probe: The probe: `text`, `tool`, `stream` or `reasoning`.
        scenario: The recorded scenario whose requests it sent, e.g. `text-cut-8`.
        verdict: `honest`, `dishonest`, `wrong` or `unknown`.
        reason: Why, in a sentence.
        observations: What each request got back.
        aspects: Each aspect of the reply, judged (empty when the reply could not be read).
        variants: The known servers whose truncation signals the cut reply carries.
        usage_fallback: For a cut request, whether `usage.output_tokens` reaches the limit (the
            one signal a client has left where the status lies).
        finished: For a cut request, the same probe's request with room to finish, judged the
            other way; None when the cut request got no answer to judge.
    """

    probe: str
    scenario: str
    verdict: str
    reason: str
    observations: list[Observation] = field(default_factory=list)
    aspects: list[Aspect] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)
    usage_fallback: Aspect | None = None
    finished: ProbeResult | None = None

    def failing(self, verdict: str) -> list[Aspect]:
        """The aspects with this verdict, e.g. `failing("dishonest")`."""
        return [aspect for aspect in self.aspects if aspect.verdict == verdict]

    def lines(self) -> list[str]:
        """The lines `mockllama check` prints for this probe."""
        fallback = self.usage_fallback
        return [
            *(obs.line for obs in self.observations),
            *(aspect.line for aspect in self.aspects if aspect.verdict != NOT_APPLICABLE),
            *([fallback.line] if fallback is not None and fallback.verdict == "gone" else []),
            *(f"  known variant: {variant}" for variant in self.variants),
            *(self.finished.lines() if self.finished is not None else []),
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


def _ask(target: Target, probe: str, scenario: str, model: str | None, timeout: float, result: ProbeResult):
    """Send the scenario's Responses request and its chat twin; the reply, the twin's finish_reason, the limit."""
    responses_body, chat_body = _recorded_requests(probe, scenario, probe == "stream", model)
    seen, observed = _observe_responses(target, responses_body, timeout, probe)
    result.observations.append(observed)
    twin = _observe_chat(target, chat_body, timeout)
    result.observations.append(twin)
    return seen, twin.fields["finish_reason"], observed.limit


def _unreadable(err: Exception) -> str:
    return f"the server's reply has a shape the probe cannot read ({type(err).__name__}: {err})"


# A shape nothing in the probe foresaw, from a server that answered something unexpected.
_SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError, ValueError)


def _probe_finished(target: Target, probe: str, scenario: str, model: str | None, timeout: float) -> ProbeResult:
    result = ProbeResult(probe, scenario, "unknown", "")
    try:
        seen, twin_reason, _ = _ask(target, probe, scenario, model, timeout, result)
        result.verdict, result.reason, result.aspects = _judge_finished(seen, twin_reason)
    except ProbeFailed as failure:
        result.reason = str(failure)
    except _SHAPE_ERRORS as err:
        result.reason, result.aspects = _unreadable(err), []
    return result


def _probe_one(target: Target, probe: str, scenario: str, model: str | None, timeout: float) -> ProbeResult:
    result = ProbeResult(probe, scenario, "unknown", "")
    try:
        seen, twin_reason, limit = _ask(target, probe, scenario, model, timeout, result)
        result.verdict, result.reason, result.aspects, result.variants = _judge(seen, twin_reason, probe)
        if twin_reason == "length":
            result.usage_fallback = _judge_usage(seen.response, limit)
    except ProbeFailed as failure:
        result.reason = str(failure)
        return result
    except _SHAPE_ERRORS as err:
        result.reason = _unreadable(err)
        result.aspects, result.variants, result.usage_fallback = [], [], None
        return result
    result.finished = _probe_finished(target, probe, FINISHING[scenario], model, timeout)
    return result


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass
class Report:
    """What `run` found: one result for each probe and scenario, and the verdict over them all.

    Attributes:
        url: The server's URL as it may be printed: without its credentials or query.
        probes: Each probe's result, in the order they were sent.
    """

    url: str
    probes: list[ProbeResult]

    @property
    def finished(self) -> list[ProbeResult]:
        """The results of the requests with room to finish."""
        return [probe.finished for probe in self.probes if probe.finished is not None]

    @property
    def verdict(self) -> str:
        """The worst of the probes' verdicts: `dishonest`, then `wrong`, then `unknown`, else `honest`."""
        verdicts = {result.verdict for result in [*self.probes, *self.finished]}
        return next((verdict for verdict in VERDICTS if verdict in verdicts), "honest")

    @property
    def exit_code(self) -> int:
        """The exit code `mockllama check` gives the verdict: 0 honest, 1 dishonest or wrong, 2 unknown."""
        return EXIT_CODES[self.verdict]

    @property
    def variants(self) -> list[str]:
        """The known servers whose signals every judged cut reply carries; failing that, those of
        any one of them (a server may fit its non-streamed replies and not its stream)."""
        judged = [probe.variants for probe in self.probes if probe.aspects]
        every = [
            variant
            for variant in dict.fromkeys(v for found in judged for v in found)
            if all(variant in found for found in judged)
        ]
        return every or list(dict.fromkeys(variant for found in judged for variant in found))

    @staticmethod
    def _named(verdict: str, results: list[ProbeResult]) -> str:
        """The aspects with this verdict in any of ``results``, each named once, in the order they are judged."""
        names = {aspect.name for result in results for aspect in result.failing(verdict)}
        return ", ".join(label for name, label in ASPECTS.items() if name in names)

    @classmethod
    def _direction(cls, results: list[ProbeResult], said: str, says: str) -> str | None:
        """What is wrong with one direction's replies (cut, or finished), or None."""
        dishonest, wrong = cls._named("dishonest", results), cls._named("wrong", results)
        if dishonest:
            return f"{said} is reported as {says} by: {dishonest}" + (f"; also wrong: {wrong}" if wrong else "")
        if wrong:
            return f"{said} is reported wrongly: {_explained([a for r in results for a in r.failing('wrong')])}"
        return None

    def _fallback(self) -> str:
        gone = [p for p in self.probes if p.usage_fallback is not None and p.usage_fallback.verdict == "gone"]
        below = [p.probe for p in gone if p.usage_fallback is not None and p.usage_fallback.why == _BELOW_THE_LIMIT]
        other = [p.probe for p in gone if p.usage_fallback is not None and p.usage_fallback.why != _BELOW_THE_LIMIT]
        said = [
            f"{what} ({', '.join(dict.fromkeys(probes))})"
            for what, probes in (("stays below max_output_tokens", below), ("is missing or not a number", other))
            if probes
        ]
        if not said:
            return ""
        return (
            f" usage.output_tokens of a cut reply {', or '.join(said)}: "
            "the one fallback signal a client has where the status lies is gone."
        )

    @property
    def summary(self) -> str:
        """The verdict in a sentence (the failing aspects, or why it cannot tell), safe to print:
        what the server sent is shown with its escapes written out."""
        return printable(self._summary())

    def _summary(self) -> str:
        verdict = self.verdict
        if verdict == "honest":
            return (
                f"{self.url}: a reply cut off at max_output_tokens is reported as 'incomplete' "
                "(reason 'max_output_tokens')." + self._fallback()
            )
        if verdict == "unknown":
            reasons = "; ".join(
                f"{result.probe}{'' if result is probe else ', with room to finish'}: {result.reason}"
                for probe in self.probes
                for result in (probe, probe.finished)
                if result is not None and result.verdict == "unknown"
            )
            return f"{self.url}: can't tell whether a cut-off reply is reported honestly: {reasons}." + self._fallback()
        parts = [
            part
            for part in (
                self._direction(self.probes, "a reply cut off at max_output_tokens", "finished"),
                self._direction(self.finished, "a reply that finished inside its limit", "cut"),
            )
            if part is not None
        ]
        if not parts:  # a verdict no aspect explains: say the probes' own reasons
            parts = [f"{r.probe}: {r.reason}" for r in [*self.probes, *self.finished] if r.verdict == verdict]
        summary = f"{self.url}: " + ". ".join([parts[0], *map(_sentence, parts[1:])])
        variants = self.variants
        return summary + (f". Known variant: {'; '.join(variants)}." if variants else ".") + self._fallback()

    def lines(self) -> list[str]:
        """What `mockllama check` prints: each probe's lines, then the summary. A reason quotes what
        a hostile server sent (a bad status line), so every line goes through ``printable``: no
        escape sequence reaches the terminal."""
        return [*(printable(line) for probe in self.probes for line in probe.lines()), self.summary]

    def to_dict(self) -> dict:
        """What `mockllama check --json` prints."""
        return {
            "url": self.url,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "summary": self.summary,
            "probes": [asdict(probe) for probe in self.probes],
        }


def run(url: str, probes: Sequence[str] = ("all",), model: str | None = None, timeout: float = 60.0) -> Report:
    """Tell whether the server at `url` reports a reply cut off by `max_output_tokens` as cut off,
    and a reply that finished as finished, as `mockllama check` does.

    Each probe sends a recorded request that cannot finish within its limit to `/v1/responses`,
    and its twin to `/v1/chat/completions`; when the twin says `finish_reason: "length"`, each
    aspect of the Responses reply is judged on its own. The same probe's request with room to
    finish is then judged the other way. Whatever the server does, `run` returns a report: an
    unreachable server, an HTTP error or a reply it cannot read gives the verdict `unknown`, with
    the reason.

    Args:
        url: The server's base URL, with or without `/v1`, e.g. `http://127.0.0.1:8080` or
            `http://127.0.0.1:18090/fixed`. A `user:password` in it is sent as Basic auth and a
            `?query` with every request; neither is ever printed.
        probes: Which probes to send: `text` (`text-cut-8`), `tool` (`tool-cut-20`), `stream`
            (both, streamed), `reasoning` (`thinking-cut-12`, for a server that thinks), or
            `all` (text, tool and stream; the default, what a CI gate should run: a server
            may lie only in its streams, and only `stream` sends one).
        model: The `model` to send, for a server that checks it; by default the recorded one.
        timeout: Seconds each request may take, from connecting to the reply's last byte.

    Returns:
        The report, with its `verdict` (`honest`, `dishonest`, `wrong` or `unknown`), `exit_code`
            (0; 1 for dishonest or wrong; 2), `summary`, `lines()` as the command prints them
            and `to_dict()` as `--json` does.

    Raises:
        ValueError: A probe that does not exist.

    Example:
        Against a running `mockllama serve`: llama-server's bug on `/buggy`, the correction on
        `/fixed`.

        ```python
        import mockllama.check

        buggy = mockllama.check.run("http://127.0.0.1:18090/buggy", probes=["text", "stream"])
        print(buggy.verdict, buggy.exit_code)
        print([aspect.name for aspect in buggy.probes[0].failing("dishonest")])
        fixed = mockllama.check.run("http://127.0.0.1:18090/fixed", probes=["all"])
        print(fixed.verdict, fixed.exit_code)
        # dishonest 1
        # ['status', 'cut_item.status', 'completed_at']
        # honest 0
        ```
    """
    chosen = ALL_PROBES if "all" in probes else tuple(probes)
    unknown = set(chosen) - set(PROBES)
    if unknown:
        raise ValueError(f"unknown probe {', '.join(sorted(unknown))}; use {', '.join(PROBES)} or all")
    try:
        target = Target.parse(url)
    except ValueError as problem:
        return Report(
            scrub_text(url),
            [
                ProbeResult(probe, scenario, "unknown", str(problem))
                for probe in chosen
                for scenario in PROBE_SCENARIOS[probe]
            ],
        )
    results = [
        _probe_one(target, probe, scenario, model, timeout) for probe in chosen for scenario in PROBE_SCENARIOS[probe]
    ]
    return Report(target.shown, results)
