"""The scenario catalogue: what `mockllama record` sends, one cassette per scenario.

A catalogue is a JSON file::

    {"scenarios": [
      {"name": "text-cut-8",
       "responses": {"model": "x", "input": "Count from 1 to 200, separated by spaces.",
                     "max_output_tokens": 8, "temperature": 0}},
      {"name": "messages-cut-8",
       "requests": [{"method": "POST", "path": "/v1/messages", "json": {"model": "x", ...}}]}
    ]}

A ``responses`` scenario is sent four times, in this order: the Responses request, then its chat
twin (derived by :func:`chat_twin`), each with ``"stream": false`` and then ``"stream": true``.
A ``responses`` scenario may be a conversation, with ``"turns"``: each later turn is the turn
before's request with the reply's output items and a ``function_call_output`` for each
function call appended to its input (``"tool_output"`` is the output's text), less the fields in ``"drop"`` and
with those in ``"set"``, as an agent loop sends it::

      {"name": "tool-conversation", "responses": {...},
       "turns": [{"tool_output": "wrote 13 characters to /tmp/hello.txt", "drop": ["tool_choice"]}]}

A ``requests`` scenario sends its raw requests as written: ``json`` for a JSON body, ``data`` for
a body sent byte for byte (malformed requests), neither for a GET.

Any scenario may have a ``"note"``: what a reader of its recording must know (a reply sampled
rather than greedy, say). The recorder copies it into ``provenance.json`` under ``"notes"``.

A scenario with ``"sweep"`` is recorded at every limit from 1 up to the length at which its reply
finishes by itself (``max_output_tokens`` of a ``responses`` scenario, and of its chat twin
``max_tokens``; the limit of each raw request of a ``requests`` scenario): with ``temperature: 0``
the reply cut at N tokens is what the server generates when asked for at most N. The length is
found from the live server, never written here: the recorder sends the request as written first
and reads ``usage.output_tokens``. ``"up_to"`` caps the positions (a text that would go on for
hundreds of tokens); ``"of"`` takes the request of another scenario of this catalogue, or of the
bundled catalogue named by ``"catalogue"``, so that one request is written once::

      {"name": "tool-call", "sweep": {"of": "tool-finishes", "catalogue": "default"}},
      {"name": "text-count", "sweep": {"up_to": 100}, "responses": {...}}

A sweep is written as one cassette, ``NAME.sweep.yaml``, and served as the scenarios ``NAME@1``
to ``NAME@LENGTH`` (``recordings.sweeps``).

A catalogue made for a server set up in a particular way names that set-up in a top-level
``"setup"`` object: its ``name``, the ``chat_template_file`` and that file's ``chat_template_sha256``, and
a ``note`` on what the recordings are. The recorder refuses a server whose chat template has
another hash, and copies the set-up into ``provenance.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from mockllama.recordings.chat_twin import chat_twin
from mockllama.recordings.shape import name_problem
from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH, RESPONSES_PATH

DEFAULT_CATALOGUE = Path(__file__).resolve().parent / "catalogue.json"
# The catalogues shipped with mockllama, by the name `mockllama record --catalogue` accepts.
BUNDLED_CATALOGUES = {
    "default": DEFAULT_CATALOGUE,
    **{path.stem: path for path in sorted((Path(__file__).resolve().parent / "catalogues").glob("*.json"))},
}
SETUP_FIELDS = ("name", "chat_template_file", "chat_template_sha256", "note")
# The limit a sweep sets, by the endpoint's own name for it.
LIMIT_FIELDS = {RESPONSES_PATH: "max_output_tokens", CHAT_PATH: "max_tokens", MESSAGES_PATH: "max_tokens"}


class CatalogueError(Exception):
    pass


@dataclass(frozen=True)
class PlannedRequest:
    method: str
    path: str
    json: object = None
    data: str | None = None
    headers: dict = field(default_factory=dict)

    def body_text(self) -> str | None:
        """The body exactly as sent: JSON in the catalogue's key order (llama-server renders tool
        schemas in the order sent, so the order is part of the request), or ``data`` as written."""
        if self.json is not None:
            return json.dumps(self.json, ensure_ascii=False)
        return self.data

    def send_headers(self) -> dict:
        if self.json is not None and not any(name.lower() == "content-type" for name in self.headers):
            return {**self.headers, "Content-Type": "application/json"}
        return self.headers

    def describe(self) -> str:
        stream = isinstance(self.json, dict) and self.json.get("stream") is True
        return f"{self.method} {self.path}" + (" (stream)" if stream else "")


@dataclass(frozen=True)
class Sweep:
    """How a catalogue scenario is swept: at every limit from 1 to where it finishes, ``up_to`` at most."""

    up_to: int | None = None

    def positions(self, finished_at: int) -> range:
        return range(1, min(finished_at, self.up_to or finished_at) + 1)


@dataclass(frozen=True)
class CatalogueScenario:
    name: str
    responses: dict | None = None
    requests: tuple[PlannedRequest, ...] = ()
    turns: tuple[dict, ...] = ()  # a conversation: how each later turn follows from the one before
    note: str | None = None  # what a reader of the recording must know (copied into provenance.json)
    sweep: Sweep | None = None  # recorded at every limit up to where it finishes, not at its own

    def planned(self) -> list[PlannedRequest]:
        """The requests of the first turn (all of them, for a ``requests`` scenario)."""
        if self.responses is None:
            return list(self.requests)
        return responses_requests(self.responses)

    def at_limit(self, limit: int) -> CatalogueScenario:
        """The same scenario asking for at most ``limit`` tokens (one position of a sweep), named
        ``NAME@LIMIT``: every request's limit set, whatever its endpoint calls it."""
        if self.responses is not None:
            return CatalogueScenario(f"{self.name}@{limit}", responses={**self.responses, "max_output_tokens": limit})
        requests = tuple(
            PlannedRequest(
                request.method, request.path, {**request.json, LIMIT_FIELDS[request.path]: limit}, None, request.headers
            )
            for request in self.requests
            if isinstance(request.json, dict)
        )
        return CatalogueScenario(f"{self.name}@{limit}", requests=requests)

    def next_turn(self, number: int, body: dict, reply: dict) -> dict:
        """Turn ``number + 1``'s Responses body, from turn ``number``'s body and its non-streamed reply.

        As an agent loop does it: the reply's output items go back in the input as they came, then
        a function_call_output with the catalogue's ``tool_output`` for each function_call."""
        turn = self.turns[number - 1]
        output = [item for item in reply.get("output") or [] if isinstance(item, dict)]
        calls = [item for item in output if item.get("type") == "function_call"]
        if not calls:
            raise CatalogueError(
                f"scenario {self.name!r}: turn {number} answered without a function call, "
                f"so there is nothing for turn {number + 1} to answer"
            )
        given = body["input"]
        history = [{"content": given, "role": "user"}] if isinstance(given, str) else list(given)
        outputs = [
            {"call_id": call["call_id"], "output": turn["tool_output"], "type": "function_call_output"}
            for call in calls
        ]
        following = {key: value for key, value in body.items() if key not in (*turn.get("drop", ()), "stream")}
        return {**following, **turn.get("set", {}), "input": [*history, *output, *outputs]}


def responses_requests(body: dict) -> list[PlannedRequest]:
    """A Responses request, then its chat twin, each with ``"stream": false`` and then ``true``."""
    planned = []
    for stream in (False, True):
        sent = {**body, "stream": stream}
        planned.append(PlannedRequest("POST", RESPONSES_PATH, json=sent))
        planned.append(PlannedRequest("POST", CHAT_PATH, json=chat_twin(sent)))
    return planned


def _raw_request(scenario: str, raw) -> PlannedRequest:
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
        raise CatalogueError(f'scenario {scenario!r}: each request needs at least a "path"')
    if "json" in raw and "data" in raw:
        raise CatalogueError(f'scenario {scenario!r}: a request has "json" or "data", not both')
    method = str(raw.get("method", "POST" if ("json" in raw or "data" in raw) else "GET")).upper()
    return PlannedRequest(method, raw["path"], raw.get("json"), raw.get("data"), dict(raw.get("headers", {})))


def _turns(source: str, name: str, turns, responses) -> tuple[dict, ...]:
    if turns is None:
        return ()
    if responses is None or not isinstance(turns, list):
        raise CatalogueError(f'{source}: scenario {name!r}: "turns" is a list, and only beside "responses"')
    for turn in turns:
        if (
            not isinstance(turn, dict)
            or not isinstance(turn.get("tool_output"), str)
            or not isinstance(turn.get("drop", []), list)
            or not isinstance(turn.get("set", {}), dict)
        ):
            raise CatalogueError(
                f'{source}: scenario {name!r}: each turn needs a "tool_output" string '
                f'(and may have a "drop" list and a "set" object)'
            )
    return tuple(turns)


def _sweep(source: str, name: str, sweep, scenario: CatalogueScenario) -> Sweep:
    """A scenario's ``"sweep"``, checked: it sweeps one first turn whose every request has a limit."""
    up_to = sweep.get("up_to") if isinstance(sweep, dict) else None
    if sweep is not True and not (isinstance(sweep, dict) and set(sweep) <= {"up_to", "of", "catalogue"}):
        raise CatalogueError(
            f'{source}: scenario {name!r}: "sweep" is true or an object with "up_to", "of", "catalogue"'
        )
    if up_to is not None and (not isinstance(up_to, int) or isinstance(up_to, bool) or up_to < 1):
        raise CatalogueError(f'{source}: scenario {name!r}: the sweep\'s "up_to" is a whole number of at least 1')
    if scenario.turns:
        raise CatalogueError(f"{source}: scenario {name!r}: a conversation cannot be swept, only one turn")
    unswept = [r.describe() for r in scenario.requests if r.path not in LIMIT_FIELDS or not isinstance(r.json, dict)]
    if unswept:
        raise CatalogueError(
            f"{source}: scenario {name!r}: a sweep sets each request's token limit, and these have none: "
            + ", ".join(unswept)
        )
    return Sweep(up_to)


def _swept_request(source: str, name: str, sweep, entries: dict) -> dict:
    """The request a sweep written with ``"of"`` takes from another scenario, as that one is written."""
    if not isinstance(sweep, dict) or "of" not in sweep:
        return {}
    of, catalogue = sweep["of"], sweep.get("catalogue")
    if catalogue is not None:
        if catalogue not in BUNDLED_CATALOGUES:
            raise CatalogueError(
                f'{source}: scenario {name!r}: the sweep\'s "catalogue" is one of {", ".join(BUNDLED_CATALOGUES)}'
            )
        _, data = _read(catalogue)
        scenarios = data.get("scenarios") if isinstance(data, dict) else None
        entries = {e.get("name"): e for e in scenarios or [] if isinstance(e, dict)}
    found = entries.get(of)
    if not isinstance(found, dict):
        raise CatalogueError(f'{source}: scenario {name!r}: the sweep is "of" {of!r}, and no such scenario is there')
    return {key: found[key] for key in ("responses", "requests") if key in found}


def parse_catalogue(data, source: str = "catalogue") -> list[CatalogueScenario]:
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise CatalogueError(f'{source}: expected a JSON object with a "scenarios" list')
    scenarios, names = [], set()
    written = {entry.get("name"): entry for entry in data["scenarios"] if isinstance(entry, dict)}
    for entry in data["scenarios"]:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            raise CatalogueError(f'{source}: every scenario needs a plain "name" (a file name), got {name!r}')
        if name_problem(name):
            raise CatalogueError(f"{source}: {name_problem(name)}")
        if name in names:
            raise CatalogueError(f"{source}: scenario {name!r} appears twice")
        if "@" in name:
            raise CatalogueError(f"{source}: scenario {name!r}: '@' is kept for a sweep's positions (NAME@LIMIT)")
        names.add(name)
        entry = {**_swept_request(source, name, entry.get("sweep"), written), **entry}
        responses, requests = entry.get("responses"), entry.get("requests")
        if (responses is None) == (requests is None):
            raise CatalogueError(f'{source}: scenario {name!r} needs exactly one of "responses" or "requests"')
        if responses is not None and not isinstance(responses, dict):
            raise CatalogueError(f'{source}: scenario {name!r}: "responses" must be a request body object')
        if requests is not None and not isinstance(requests, list):
            raise CatalogueError(f'{source}: scenario {name!r}: "requests" must be a list')
        planned = tuple(_raw_request(name, raw) for raw in requests or [])
        note = entry.get("note")
        if note is not None and not isinstance(note, str):
            raise CatalogueError(f'{source}: scenario {name!r}: "note" must be a string')
        scenario = CatalogueScenario(
            name, responses, planned, _turns(source, name, entry.get("turns"), responses), note
        )
        if entry.get("sweep") not in (None, False):
            scenario = replace(scenario, sweep=_sweep(source, name, entry["sweep"], scenario))
        scenarios.append(scenario)
    return scenarios


def parse_setup(data, source: str = "catalogue") -> dict | None:
    """The catalogue's ``"setup"`` object (None when it has none), each field a string."""
    setup = data.get("setup") if isinstance(data, dict) else None
    if setup is None:
        return None
    if not isinstance(setup, dict) or not all(isinstance(setup.get(key), str) for key in SETUP_FIELDS):
        raise CatalogueError(f'{source}: "setup" must be an object with the strings {", ".join(SETUP_FIELDS)}')
    return {key: setup[key] for key in SETUP_FIELDS}


def catalogue_path(path: Path | str | None) -> Path:
    """A catalogue file, or the name of a bundled one (``default``, ``forced-thinking``)."""
    if path is None:
        return DEFAULT_CATALOGUE
    if str(path) in BUNDLED_CATALOGUES and not Path(path).exists():
        return BUNDLED_CATALOGUES[str(path)]
    return Path(path)


def _read(path: Path | str | None) -> tuple[Path, object]:
    path = catalogue_path(path)
    try:
        return path, json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise CatalogueError(f"cannot read catalogue {path}: {err.strerror or err}") from None
    except ValueError as err:
        raise CatalogueError(f"catalogue {path} is not valid JSON: {err}") from None


def load_catalogue(path: Path | str | None = None) -> list[CatalogueScenario]:
    path, data = _read(path)
    return parse_catalogue(data, str(path))


def load_setup(path: Path | str | None = None) -> dict | None:
    """The set-up a catalogue was made for, or None for any llama-server (the default catalogue)."""
    path, data = _read(path)
    return parse_setup(data, str(path))
