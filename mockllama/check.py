"""Does a server's /v1/responses report a reply cut off by max_output_tokens as cut off?

Each probe sends a request that cannot finish within its limit to ``/v1/responses``, and its twin
to ``/v1/chat/completions``, then compares. The requests are the bundled scenarios' own recorded
requests (``text-cut-8``, ``tool-cut-20``, from the recorder's catalogue), so mockllama answers
them and a real server gets exactly what was recorded. Use it from Python::

    report = mockllama.check.run("http://127.0.0.1:8080", probes=["text", "stream"])
    assert report.exit_code == 0, report.summary

Verdicts: ``dishonest`` (exit 1) when any probe's cut-off reply says ``completed``; ``honest``
(exit 0) when every probe's says ``incomplete`` with reason ``max_output_tokens``; otherwise
``unknown`` (exit 2), with the reason.

The ``reasoning`` probe asks the forced-thinking question (``thinking-cut-12``, from the
forced-thinking catalogue): a reply cut while the model is still thinking. It can only judge a
server that answers with a reasoning item; a reply without one is ``unknown``, never ``honest``.
"""

from __future__ import annotations

import http.client
import io
import json
import socket
import time
from dataclasses import asdict, dataclass, field
from urllib.parse import urlsplit

from mockllama.recordings.catalogue import load_catalogue
from mockllama.recordings.scrub import scrub_text
from mockllama.wire import sse
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH

PROBES = ("text", "tool", "stream", "reasoning")
# "all": the probes every server can answer; reasoning needs a server that thinks, so it is asked for by name.
ALL_PROBES = ("text", "tool", "stream")
PROBE_SCENARIOS = {"text": ("text-cut-8",), "tool": ("tool-cut-20",), "stream": ("text-cut-8", "tool-cut-20"),
                   "reasoning": ("thinking-cut-12",)}
PROBE_CATALOGUES = {"reasoning": "forced-thinking"}
EXIT_CODES = {"honest": 0, "dishonest": 1, "unknown": 2}
# A cut-off reply is a few kilobytes; a server that sends this much is not answering the probe.
MAX_REPLY_BYTES = 8 * 1024 * 1024


class ProbeFailed(Exception):
    """The server's answer can't be judged: unreachable, an HTTP error, not JSON, a timeout."""


@dataclass
class Observation:
    """What one request got back: one line of the report."""

    endpoint: str
    stream: bool
    limit: int
    line: str
    fields: dict = field(default_factory=dict)


@dataclass
class ProbeResult:
    probe: str
    scenario: str
    verdict: str
    reason: str
    observations: list[Observation] = field(default_factory=list)


@dataclass
class Report:
    url: str
    probes: list[ProbeResult]

    @property
    def verdict(self) -> str:
        verdicts = {probe.verdict for probe in self.probes}
        return "dishonest" if "dishonest" in verdicts else "unknown" if "unknown" in verdicts else "honest"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    @property
    def summary(self) -> str:
        if self.verdict == "dishonest":
            return f"{self.url}: a reply cut off at max_output_tokens is reported as 'completed'."
        if self.verdict == "honest":
            return (f"{self.url}: a reply cut off at max_output_tokens is reported as 'incomplete' "
                    "(reason 'max_output_tokens').")
        reasons = "; ".join(f"{p.probe}: {p.reason}" for p in self.probes if p.verdict == "unknown")
        return f"{self.url}: can't tell whether a cut-off reply is reported honestly: {reasons}."

    def lines(self) -> list[str]:
        return [*(obs.line for probe in self.probes for obs in probe.observations), self.summary]

    def to_dict(self) -> dict:
        return {"url": self.url, "verdict": self.verdict, "exit_code": self.exit_code, "summary": self.summary,
                "probes": [asdict(probe) for probe in self.probes]}


def _recorded_requests(probe: str, scenario: str, stream: bool, model: str | None) -> tuple[dict, dict]:
    """The Responses request and its chat twin as the recorder sent them. The catalogue, not the
    cassette, keeps their key order, which llama-server's prompt depends on."""
    catalogue = load_catalogue(PROBE_CATALOGUES.get(probe, "default"))
    entry = next(entry for entry in catalogue if entry.name == scenario)
    responses, chat = [p.json for p in entry.planned() if p.json.get("stream") is stream]
    bodies = dict(responses), dict(chat)
    if model is not None:
        for body in bodies:
            body["model"] = model
    return bodies


class _DeadlineReader(io.RawIOBase):
    """A socket's reads, each given only what is left of one deadline, and capped in total, so
    that a server that drips a byte at a time or streams forever is cut off all the same."""

    def __init__(self, sock: socket.socket, deadline: float, cap: int):
        super().__init__()
        self.sock, self.deadline, self.cap, self.total = sock, deadline, cap, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("deadline passed")
        self.sock.settimeout(remaining)
        count = self.sock.recv_into(buffer)
        self.total += count
        if self.total > self.cap:
            raise _TooLarge()
        return count


class _TooLarge(Exception):
    pass


class _DeadlineSocket:
    """What http.client needs of a socket (sendall, makefile, close), under one deadline."""

    def __init__(self, sock: socket.socket, deadline: float, cap: int):
        self.sock, self.deadline, self.cap = sock, deadline, cap

    def sendall(self, data) -> None:
        self.sock.settimeout(max(self.deadline - time.monotonic(), 0.001))
        self.sock.sendall(data)

    def makefile(self, mode: str, *args, **kwargs):
        return io.BufferedReader(_DeadlineReader(self.sock, self.deadline, self.cap))

    def close(self) -> None:
        self.sock.close()


def _post(url: str, path: str, body: dict, timeout: float) -> bytes:
    """POST ``body``; the whole exchange (connect, send, headers, body) has ``timeout`` seconds."""
    parts = urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    deadline = time.monotonic() + timeout
    connection = connection_class(parts.hostname, parts.port, timeout=timeout)
    full_path = parts.path.rstrip("/") + path
    try:
        connection.connect()
        connection.sock = _DeadlineSocket(connection.sock, deadline, MAX_REPLY_BYTES)
        connection.request("POST", full_path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        payload = response.read()
    except (socket.timeout, TimeoutError):
        raise ProbeFailed(f"no complete answer from POST {full_path} within {timeout:g} s") from None
    except _TooLarge:
        raise ProbeFailed(f"POST {full_path} answered more than {MAX_REPLY_BYTES} bytes; stopped reading") from None
    except http.client.HTTPException as err:
        what = type(err).__name__
        detail = " ".join(str(err).split())[:120]
        raise ProbeFailed(f"POST {full_path} answered malformed HTTP ({what}{': ' + detail if detail else ''})") from None
    except OSError as err:
        raise ProbeFailed(f"cannot reach {url} ({err.strerror or err})") from None
    finally:
        connection.close()
    if response.status != 200:
        raise ProbeFailed(f"POST {full_path} answered HTTP {response.status}: {payload[:200].decode(errors='replace')!r}")
    return payload


def _json(payload: bytes, path: str) -> dict:
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        raise ProbeFailed(f"POST {path} answered something that is not JSON: {payload[:80].decode(errors='replace')!r}") from None
    if not isinstance(data, dict):
        raise ProbeFailed(f"POST {path} answered JSON that is not an object")
    return data


def _stream_events(payload: bytes, path: str) -> list[dict]:
    try:
        events = [event.json() for event in sse.parse_stream(payload)]
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ProbeFailed(f"POST {path} with stream=true answered events that are not UTF-8 JSON") from None
    events = [event for event in events if isinstance(event, dict)]
    if not events:
        raise ProbeFailed(f"POST {path} with stream=true answered no JSON server-sent events")
    return events


def _function_calls(response: dict) -> list[dict]:
    return [item for item in response.get("output") or [] if item.get("type") == "function_call"]


def _response_object(response, path: str) -> dict:
    """A Responses object whose fields the verdict reads, or ProbeFailed saying what is wrong."""
    if not isinstance(response, dict):
        raise ProbeFailed(f"POST {path} answered a response that is not a JSON object")
    if not isinstance(response.get("status"), str):
        raise ProbeFailed(f"POST {path} answered a response without a \"status\" string")
    output = response.get("output") or []
    if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
        raise ProbeFailed(f"POST {path} answered an \"output\" that is not a list of objects")
    for key in ("usage", "incomplete_details"):
        if response.get(key) is not None and not isinstance(response[key], dict):
            raise ProbeFailed(f"POST {path} answered a \"{key}\" that is not an object")
    return response


def _choices(chunk: dict, path: str) -> list[dict]:
    choices = chunk.get("choices") or []
    if not isinstance(choices, list) or not all(isinstance(choice, dict) for choice in choices):
        raise ProbeFailed(f"POST {path} answered \"choices\" that are not a list of objects")
    return choices


def _reasoning_items(response: dict) -> list[dict]:
    return [item for item in response.get("output") or [] if item.get("type") == "reasoning"]


def _output_text(response: dict) -> str:
    """What the SDK's ``output_text`` gives: the text of the message items, reasoning left out."""
    return "".join(part.get("text") or "" for item in response.get("output") or [] if item.get("type") == "message"
                   for part in item.get("content") or [] if part.get("type") == "output_text")


def _parses(arguments) -> bool:
    try:
        json.loads(arguments)
        return True
    except (TypeError, ValueError):
        return False


def _finish_reason(chat: dict) -> str | None:
    choices = _choices(chat, CHAT_PATH) or [{}]
    return _reason(choices[0].get("finish_reason"))


def _stream_finish_reason(events: list[dict]) -> str | None:
    reasons = [c.get("finish_reason") for e in events for c in _choices(e, CHAT_PATH) if c.get("finish_reason")]
    return _reason(reasons[-1]) if reasons else None


def _reason(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ProbeFailed(f"POST {CHAT_PATH} answered a finish_reason that is not a string: {value!r:.80}")
    return value


def _observe_responses(url, body, timeout, probe) -> tuple[dict, Observation]:
    limit = body.get("max_output_tokens")
    head = f"{RESPONSES_PATH} max_output_tokens={limit}" + (" stream" if body.get("stream") else "")
    payload = _post(url, RESPONSES_PATH, body, timeout)
    if body.get("stream"):
        events = _stream_events(payload, RESPONSES_PATH)
        terminal = events[-1]
        response = _response_object(terminal.get("response"), RESPONSES_PATH + " (its last event)")
        calls = _function_calls(response)
        done = {e.get("item_id") for e in events if e.get("type") == "response.function_call_arguments.done"}
        fields = {"terminal_event": terminal.get("type"), "status": response.get("status"),
                  "incomplete_details": response.get("incomplete_details"),
                  "function_calls": len(calls), "function_calls_with_arguments_done": sum(c.get("id") in done for c in calls)}
        line = (f"{head}: last event={fields['terminal_event']!r} status={fields['status']!r} "
                f"incomplete_details={fields['incomplete_details']!r}")
        if calls:
            line += f" function_call_arguments.done for {fields['function_calls_with_arguments_done']} of {len(calls)} calls"
    else:
        response = _response_object(_json(payload, RESPONSES_PATH), RESPONSES_PATH)
        fields = {"status": response.get("status"), "incomplete_details": response.get("incomplete_details"),
                  "output_tokens": (response.get("usage") or {}).get("output_tokens")}
        line = f"{head}: status={fields['status']!r} incomplete_details={fields['incomplete_details']!r}"
        if probe == "reasoning":
            items = _reasoning_items(response)
            fields |= {"reasoning_items": len(items), "reasoning_status": items[-1].get("status") if items else None,
                       "output_text": _output_text(response)}
            line += (f" reasoning item status={fields['reasoning_status']!r} output_text={fields['output_text']!r}"
                     if items else " (no reasoning item)")
        if probe == "tool":
            call = (_function_calls(response) or [{}])[-1]
            fields |= {"function_call_status": call.get("status"), "arguments": call.get("arguments"),
                       "arguments_parse": _parses(call.get("arguments"))}
            line += (f" function_call status={fields['function_call_status']!r} arguments="
                     f"{fields['arguments']!r} ({'parse' if fields['arguments_parse'] else 'do not parse'} as JSON)")
        line += f" output_tokens={fields['output_tokens']}"
    return response, Observation(RESPONSES_PATH, bool(body.get("stream")), limit, line, fields)


def _observe_chat(url, body, timeout) -> Observation:
    limit = body.get("max_tokens")
    payload = _post(url, CHAT_PATH, body, timeout)
    if body.get("stream"):
        reason = _stream_finish_reason(_stream_events(payload, CHAT_PATH))
    else:
        reason = _finish_reason(_json(payload, CHAT_PATH))
    head = f"{CHAT_PATH} max_tokens={limit}" + (" stream" if body.get("stream") else "")
    return Observation(CHAT_PATH, bool(body.get("stream")), limit, f"{head}: finish_reason={reason!r}",
                       {"finish_reason": reason})


def _judge(response: dict, twin_reason: str | None, probe: str) -> tuple[str, str]:
    if probe == "reasoning" and not _reasoning_items(response):
        return "unknown", ("the reply carries no reasoning item, so the server did not think and this probe cannot "
                           "tell how it reports a cut inside reasoning (llama-server thinks only with a reasoning "
                           "chat template, e.g. scripts/llama-server.sh run --setup smollm2-135m-forced-thinking)")
    if twin_reason != "length":
        return "unknown", (f"the chat twin says finish_reason={twin_reason!r}, not 'length': the reply finished "
                           "inside the limit, so this probe proves nothing")
    # The cut falls in the last item (a function call or reasoning being generated); an item before
    # it finished, and says so rightly.
    items = [item for item in (response.get("output") or [])[-1:] if item.get("type") in ("function_call", "reasoning")]
    statuses = [response.get("status")] + [item.get("status") for item in items]
    if "completed" in statuses:
        return "dishonest", "the chat twin says 'length' but /v1/responses says 'completed'"
    details = response.get("incomplete_details") or {}
    if response.get("status") == "incomplete" and details.get("reason") == "max_output_tokens":
        return "honest", "reported as 'incomplete' with reason 'max_output_tokens'"
    return "unknown", f"status={response.get('status')!r} incomplete_details={response.get('incomplete_details')!r}"


def _probe_one(url: str, probe: str, scenario: str, model: str | None, timeout: float) -> ProbeResult:
    stream = probe == "stream"
    responses_body, chat_body = _recorded_requests(probe, scenario, stream, model)
    result = ProbeResult(probe, scenario, "unknown", "")
    try:
        response, observed = _observe_responses(url, responses_body, timeout, probe)
        result.observations.append(observed)
        twin = _observe_chat(url, chat_body, timeout)
        result.observations.append(twin)
    except ProbeFailed as failure:
        result.reason = str(failure)
        return result
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as err:  # a shape nothing above foresaw
        result.reason = f"the server's reply has a shape the probe cannot read ({type(err).__name__}: {err})"
        return result
    result.verdict, result.reason = _judge(response, twin.fields["finish_reason"], probe)
    return result


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be probed, or None. The message never repeats a password the URL holds."""
    shown = repr(scrub_text(url))
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port out of range)
    except ValueError as err:
        return f"{shown} is not a usable URL ({err})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{shown} is not an http:// or https:// URL with a host; write e.g. http://127.0.0.1:8080"
    return None


def run(url: str, probes=("text",), model: str | None = None, timeout: float = 60.0) -> Report:
    """Probe ``url`` (a server base URL, with or without ``/v1``) and return the report."""
    url = url.rstrip("/").removesuffix("/v1")
    chosen = ALL_PROBES if "all" in probes else tuple(probes)
    unknown = set(chosen) - set(PROBES)
    if unknown:
        raise ValueError(f"unknown probe {', '.join(sorted(unknown))}; use {', '.join(PROBES)} or all")
    problem = url_problem(url)
    results = [ProbeResult(probe, scenario, "unknown", problem) if problem
               else _probe_one(url, probe, scenario, model, timeout)
               for probe in chosen for scenario in PROBE_SCENARIOS[probe]]
    return Report(url, results)
