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
"""

from __future__ import annotations

import http.client
import json
import socket
from dataclasses import asdict, dataclass, field
from urllib.parse import urlsplit

from . import sse
from .cassettes import CHAT_PATH, RESPONSES_PATH
from .catalogue import load_catalogue

PROBES = ("text", "tool", "stream")
PROBE_SCENARIOS = {"text": ("text-cut-8",), "tool": ("tool-cut-20",), "stream": ("text-cut-8", "tool-cut-20")}
EXIT_CODES = {"honest": 0, "dishonest": 1, "unknown": 2}


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


def _recorded_requests(scenario: str, stream: bool, model: str | None) -> tuple[dict, dict]:
    """The Responses request and its chat twin as the recorder sent them. The catalogue, not the
    cassette, keeps their key order, which llama-server's prompt depends on."""
    entry = next(entry for entry in load_catalogue() if entry.name == scenario)
    responses, chat = [p.json for p in entry.planned() if p.json.get("stream") is stream]
    bodies = dict(responses), dict(chat)
    if model is not None:
        for body in bodies:
            body["model"] = model
    return bodies


def _post(url: str, path: str, body: dict, timeout: float) -> bytes:
    parts = urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, parts.port, timeout=timeout)
    full_path = parts.path.rstrip("/") + path
    try:
        connection.request("POST", full_path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        payload = response.read()
    except (socket.timeout, TimeoutError):
        raise ProbeFailed(f"no answer from POST {full_path} within {timeout:g} s") from None
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
    except ValueError:
        raise ProbeFailed(f"POST {path} answered something that is not JSON: {payload[:80].decode(errors='replace')!r}") from None
    if not isinstance(data, dict):
        raise ProbeFailed(f"POST {path} answered JSON that is not an object")
    return data


def _stream_events(payload: bytes, path: str) -> list[dict]:
    events = [event.json() for event in sse.parse_stream(payload)]
    events = [event for event in events if isinstance(event, dict)]
    if not events:
        raise ProbeFailed(f"POST {path} with stream=true answered no JSON server-sent events")
    return events


def _function_calls(response: dict) -> list[dict]:
    return [item for item in response.get("output") or [] if item.get("type") == "function_call"]


def _parses(arguments) -> bool:
    try:
        json.loads(arguments)
        return True
    except (TypeError, ValueError):
        return False


def _finish_reason(chat: dict) -> str | None:
    choices = chat.get("choices") or [{}]
    return choices[0].get("finish_reason")


def _stream_finish_reason(events: list[dict]) -> str | None:
    reasons = [c.get("finish_reason") for e in events for c in e.get("choices") or [] if c.get("finish_reason")]
    return reasons[-1] if reasons else None


def _observe_responses(url, body, timeout, probe) -> tuple[dict, Observation]:
    limit = body.get("max_output_tokens")
    head = f"{RESPONSES_PATH} max_output_tokens={limit}" + (" stream" if body.get("stream") else "")
    payload = _post(url, RESPONSES_PATH, body, timeout)
    if body.get("stream"):
        events = _stream_events(payload, RESPONSES_PATH)
        terminal = events[-1]
        response = terminal.get("response") or {}
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
        response = _json(payload, RESPONSES_PATH)
        fields = {"status": response.get("status"), "incomplete_details": response.get("incomplete_details"),
                  "output_tokens": (response.get("usage") or {}).get("output_tokens")}
        line = f"{head}: status={fields['status']!r} incomplete_details={fields['incomplete_details']!r}"
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


def _judge(response: dict, twin_reason: str | None) -> tuple[str, str]:
    if twin_reason != "length":
        return "unknown", (f"the chat twin says finish_reason={twin_reason!r}, not 'length': the reply finished "
                           "inside the limit, so this probe proves nothing")
    statuses = [response.get("status")] + [c.get("status") for c in _function_calls(response)]
    if "completed" in statuses:
        return "dishonest", "the chat twin says 'length' but /v1/responses says 'completed'"
    details = response.get("incomplete_details") or {}
    if response.get("status") == "incomplete" and details.get("reason") == "max_output_tokens":
        return "honest", "reported as 'incomplete' with reason 'max_output_tokens'"
    return "unknown", f"status={response.get('status')!r} incomplete_details={response.get('incomplete_details')!r}"


def _probe_one(url: str, probe: str, scenario: str, model: str | None, timeout: float) -> ProbeResult:
    stream = probe == "stream"
    responses_body, chat_body = _recorded_requests(scenario, stream, model)
    result = ProbeResult(probe, scenario, "unknown", "")
    try:
        response, observed = _observe_responses(url, responses_body, timeout, probe)
        result.observations.append(observed)
        twin = _observe_chat(url, chat_body, timeout)
        result.observations.append(twin)
    except ProbeFailed as failure:
        result.reason = str(failure)
        return result
    result.verdict, result.reason = _judge(response, twin.fields["finish_reason"])
    return result


def run(url: str, probes=("text",), model: str | None = None, timeout: float = 60.0) -> Report:
    """Probe ``url`` (a server base URL, with or without ``/v1``) and return the report."""
    url = url.rstrip("/").removesuffix("/v1")
    chosen = PROBES if "all" in probes else tuple(probes)
    unknown = set(chosen) - set(PROBES)
    if unknown:
        raise ValueError(f"unknown probe {', '.join(sorted(unknown))}; use {', '.join(PROBES)} or all")
    results = [_probe_one(url, probe, scenario, model, timeout) for probe in chosen
               for scenario in PROBE_SCENARIOS[probe]]
    return Report(url, results)
