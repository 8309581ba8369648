"""Probes: what ``check`` sends (each probe's recorded requests, declared once in ``PROBES``), how it
sends them, and what it makes of one probe's scenario from start to verdict.

A probe of ``/v1/responses`` sends a cut scenario's request and its chat twin (which shows how the
generation ended), judges the reply, then does the same with the scenario's twin with room to
finish (``FINISHING``). A probe of ``/v1/chat/completions`` sends the same scenarios' chat
requests, and judges each reply by what it shows itself. A new probe is an entry in ``PROBES``; a
probe of another endpoint is its entries there and how that endpoint is asked and judged, an entry
in ``ASKING``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mockllama.behaviours.variants.signals import ABSENT
from mockllama.check.reading import (
    ChatSeen,
    ProbeFailed,
    Seen,
    _function_calls,
    _json,
    _output_text,
    _parses,
    _reasoning_items,
    _response_object,
    _stream_events,
    seen_in_chat,
    seen_in_stream,
)
from mockllama.check.report import Observation, ProbeResult
from mockllama.check.verdicts import (
    _judge,
    _judge_chat,
    _judge_chat_finished,
    _judge_chat_usage,
    _judge_finished,
    _judge_usage,
    shows_cut,
)
from mockllama.recordings.catalogue import load_catalogue
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from mockllama.wire.untrusted_http import Target, fetch


@dataclass(frozen=True)
class Probe:
    """One probe ``mockllama check`` can send (``--probe NAME``): the recorded scenarios it sends,
    and how. Each scenario is a request that cannot finish within its limit; the probe also sends
    its twin with room to finish (``FINISHING``)."""

    name: str
    scenarios: tuple[str, ...]  # the cut scenarios, sent in this order
    stream: bool = False  # sends the scenarios' streamed requests
    catalogue: str = "default"  # the recorder's catalogue that plans its requests
    in_all: bool = True  # sent by ``--probe all`` (and its endpoint's group): every server can answer it
    # What more its line of the report says of a reply that is no stream: (fields, text).
    details: Callable[[dict], tuple[dict, str]] | None = None
    endpoint: str = RESPONSES_PATH  # the endpoint whose reply it judges; ASKING says how it is asked


def _reasoning_details(response: dict) -> tuple[dict, str]:
    """The last reasoning item's status, and the text the SDK's ``output_text`` gives."""
    items = _reasoning_items(response)
    fields = {
        "reasoning_items": len(items),
        "reasoning_status": items[-1].get("status") if items else None,
        "output_text": _output_text(response),
    }
    line = (
        f" reasoning item status={fields['reasoning_status']!r} output_text={fields['output_text']!r}"
        if items
        else " (no reasoning item)"
    )
    return fields, line


def _tool_details(response: dict) -> tuple[dict, str]:
    """The cut call's status and arguments, and whether the arguments parse as JSON."""
    call = (_function_calls(response) or [{}])[-1]
    fields = {
        "function_call_status": call.get("status"),
        "arguments": call.get("arguments"),
        "arguments_parse": _parses(call.get("arguments")),
    }
    line = (
        f" function_call status={fields['function_call_status']!r} arguments="
        f"{fields['arguments']!r} ({'parse' if fields['arguments_parse'] else 'do not parse'} as JSON)"
    )
    return fields, line


# Every probe, in the order `--probe all` sends them; `--probe`'s choices are their names.
PROBES = {
    probe.name: probe
    for probe in (
        Probe("text", ("text-cut-8",)),
        Probe("tool", ("tool-cut-20",), details=_tool_details),
        Probe("stream", ("text-cut-8", "tool-cut-20"), stream=True),
        # The forced-thinking question: a reply cut while the model is still thinking. Only a server
        # that thinks can answer it, so "all" leaves it out and it is asked for by name.
        Probe("reasoning", ("thinking-cut-12",), catalogue="forced-thinking", in_all=False, details=_reasoning_details),
        # The same scenarios' chat requests, each reply judged by what it shows itself.
        Probe("chat-text", ("text-cut-8",), endpoint=CHAT_PATH),
        Probe("chat-tool", ("tool-cut-20",), endpoint=CHAT_PATH),
        Probe("chat-stream", ("text-cut-8", "tool-cut-20"), stream=True, endpoint=CHAT_PATH),
    )
}
# "all": the probes every server can answer.
ALL_PROBES = tuple(name for name, probe in PROBES.items() if probe.in_all)
# Each endpoint's probes in "all", by a name `--probe` takes: to gate one endpoint alone.
GROUPS = {
    group: tuple(name for name in ALL_PROBES if PROBES[name].endpoint == path)
    for group, path in (("responses", RESPONSES_PATH), ("chat", CHAT_PATH))
}
# Each cut scenario's twin with room to finish: the same kind of request, a limit it stays inside.
FINISHING = {"text-cut-8": "text-finishes", "tool-cut-20": "tool-finishes", "thinking-cut-12": "thinking-finishes"}
# A cut-off reply is a few kilobytes; a server that sends this much is not answering the probe.
MAX_REPLY_BYTES = 8 * 1024 * 1024


def _recorded_requests(probe: str, scenario: str, stream: bool, model: str | None) -> tuple[dict, dict]:
    """The Responses request and its chat twin as the recorder sent them. The catalogue, not the
    cassette, keeps their key order, which llama-server's prompt depends on."""
    catalogue = load_catalogue(PROBES[probe].catalogue)
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
        details = PROBES[probe].details
        if details is not None:
            more, said = details(response)
            fields |= more
            line += said
        line += f" output_tokens={fields['output_tokens']}"
    return seen, Observation(RESPONSES_PATH, bool(body.get("stream")), limit, line, fields)


def _observe_chat(target, body, timeout) -> tuple[ChatSeen, Observation]:
    limit, stream = body.get("max_tokens"), bool(body.get("stream"))
    seen = seen_in_chat(_post(target, CHAT_PATH, body, timeout), limit, stream)
    tokens = None if seen.completion_tokens is ABSENT else seen.completion_tokens
    fields = {"finish_reason": seen.finish_reason, "completion_tokens": tokens, "tool_calls": len(seen.arguments)}
    line = f"{CHAT_PATH} max_tokens={limit}" + (" stream" if stream else "") + f": finish_reason={seen.finish_reason!r}"
    if seen.completion_tokens is not ABSENT:
        line += f" completion_tokens={tokens!r:.40}"
    if seen.arguments:
        fields["arguments_parse"] = all(_parses(arguments) for arguments in seen.arguments)
        said = "parse" if fields["arguments_parse"] else "do not parse"
        line += f" tool_calls={len(seen.arguments)} (arguments {said} as JSON)"
    return seen, Observation(CHAT_PATH, stream, limit, line, fields)


def _ask(target: Target, probe: str, scenario: str, model: str | None, timeout: float, result: ProbeResult):
    """Send the scenario's Responses request and its chat twin; the reply, the twin, the limit."""
    responses_body, chat_body = _recorded_requests(probe, scenario, PROBES[probe].stream, model)
    seen, observed = _observe_responses(target, responses_body, timeout, probe)
    result.observations.append(observed)
    twin, said = _observe_chat(target, chat_body, timeout)
    result.observations.append(said)
    return seen, twin, observed.limit


def _unreadable(err: Exception) -> str:
    return f"the server's reply has a shape the probe cannot read ({type(err).__name__}: {err})"


# A shape nothing in the probe foresaw, from a server that answered something unexpected.
_SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError, ValueError)


def _cut_responses(target: Target, probe: str, scenario: str, model: str | None, timeout: float, result: ProbeResult):
    """A cut Responses request, judged against its chat twin; its usage fallback where the twin shows the cut."""
    seen, twin, limit = _ask(target, probe, scenario, model, timeout, result)
    result.verdict, result.reason, result.aspects, result.variants = _judge(seen, twin, probe)
    if shows_cut(twin) is not None:
        result.usage_fallback = _judge_usage(seen.response, limit)


def _finished_responses(
    target: Target, probe: str, scenario: str, model: str | None, timeout: float, result: ProbeResult
):
    seen, twin, _ = _ask(target, probe, scenario, model, timeout, result)
    result.verdict, result.reason, result.aspects = _judge_finished(seen, twin)


def _ask_chat(target: Target, probe: str, scenario: str, model: str | None, timeout: float, result: ProbeResult):
    """Send the scenario's chat request; the reply as seen, and the request."""
    _, body = _recorded_requests(probe, scenario, PROBES[probe].stream, model)
    seen, observed = _observe_chat(target, body, timeout)
    result.observations.append(observed)
    return seen, body


def _cut_chat(target: Target, probe: str, scenario: str, model: str | None, timeout: float, result: ProbeResult):
    """A cut chat request, judged by what its reply shows itself; its usage fallback where it shows the cut."""
    seen, body = _ask_chat(target, probe, scenario, model, timeout, result)
    result.verdict, result.reason, result.aspects, result.variants = _judge_chat(seen, body)
    if result.aspects:  # the reply shows the cut
        result.usage_fallback = _judge_chat_usage(seen)


def _finished_chat(target: Target, probe: str, scenario: str, model: str | None, timeout: float, result: ProbeResult):
    seen, _ = _ask_chat(target, probe, scenario, model, timeout, result)
    result.verdict, result.reason, result.aspects = _judge_chat_finished(seen)


# How the probes of each endpoint are sent and judged, by the endpoint whose reply is judged: the
# cut request, then the request with room to finish. Each fills in the ProbeResult it is given.
ASKING = {RESPONSES_PATH: (_cut_responses, _finished_responses), CHAT_PATH: (_cut_chat, _finished_chat)}


def _judged(
    ask, target: Target, probe: str, scenario: str, model: str | None, timeout: float
) -> tuple[ProbeResult, bool]:
    """``ask``'s ProbeResult, and whether the reply was judged: a request that failed, or a reply of
    a shape nothing foresaw, leaves it "unknown", with the reason."""
    result = ProbeResult(probe, scenario, "unknown", "", endpoint=PROBES[probe].endpoint)
    try:
        ask(target, probe, scenario, model, timeout, result)
    except ProbeFailed as failure:
        result.reason = str(failure)
        return result, False
    except _SHAPE_ERRORS as err:
        result.reason = _unreadable(err)
        result.aspects, result.variants, result.usage_fallback = [], [], None
        return result, False
    return result, True


def run_probe(target: Target, probe: str, scenario: str, model: str | None, timeout: float) -> ProbeResult:
    """One scenario of a probe, sent and judged as its endpoint is (``ASKING``): the cut request,
    then, if its reply was judged, the request with room to finish."""
    cut, finished = ASKING[PROBES[probe].endpoint]
    result, judged = _judged(cut, target, probe, scenario, model, timeout)
    if judged:
        result.finished, _ = _judged(finished, target, probe, FINISHING[scenario], model, timeout)
    return result
