"""Loading vcrpy cassettes and indexing them into scenarios.

A scenario is one cassette, named after its file: usually the ``/v1/responses`` interactions
(streamed and not) plus their chat twins, the same prompt and limit sent to
``/v1/chat/completions``. The twin's ``finish_reason`` is what llama-server knew and dropped.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import re
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

from mockllama.recordings.chat_twin import turn_of
from mockllama.recordings.index import IndexWriter, read_index, stamp, unchanged
from mockllama.recordings.parallel import map_in_order
from mockllama.recordings.shape import name_problem, reply_problem
from mockllama.recordings.sweeps import position_name, sweep_of_file
from mockllama.wire import sse
from mockllama.wire.nesting import MAX_JSON_DEPTH, cannot_nest_deeper, depth_exceeds
from mockllama.wire.routes import CHAT_PATH, MESSAGES_PATH

CASSETTE_SUFFIXES = (".yaml", ".yml")  # a sweep's too: NAME.sweep.yaml (recordings.sweeps)
# A recording's server set-up (chat template above all) is named by the "setup" of the
# provenance.json beside it or above it; recordings with none come from the default set-up.
DEFAULT_SETUP = "default"
PROVENANCE = "provenance.json"
MAX_PROVENANCE_BYTES = 1024 * 1024
# A cassette larger than this is parsed as it is read, not held as text besides: one holding a
# reply of tens of megabytes then loads in about twice its size of memory, not four times.
STREAMED_CASSETTE_BYTES = 4 * 1024 * 1024


class CassetteError(Exception):
    """A cassette that cannot be served; the message names the file and the reason."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"cannot load cassette {path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self):  # raised in a worker process (recordings.parallel), re-raised in the loader
        return CassetteError, (self.path, self.reason)


def _shipped(in_wheel: str, in_checkout: str) -> Path:
    package_dir = Path(__file__).resolve().parent.parent  # mockllama/, where the wheel puts them
    return package_dir / in_wheel if (package_dir / in_wheel).is_dir() else package_dir.parent / in_checkout


def bundled_cassette_dir() -> Path:
    """The recordings shipped with mockllama: inside the wheel, or at the top of a checkout."""
    return _shipped("_bundled_cassettes", "cassettes")


def patched_cassette_dir() -> Path:
    """The same catalogue recorded from llama-server built with patches/llama-server-responses-incomplete.patch:
    what a corrected llama-server really sends. A set of its own, under the stock scenarios' names."""
    return _shipped("_patched_cassettes", "cassettes-patched")


# The recording sets shipped with mockllama, by the name `--recordings` takes.
RECORDING_SETS = {"stock": bundled_cassette_dir, "patched": patched_cassette_dir}


@cache
def bundled_names() -> frozenset[str]:
    """Every scenario name of the bundled recording sets: the pytest plugin serves one of them
    beside a record directory, so a recording under one of these names would stop it starting."""
    return frozenset(path.stem for make in RECORDING_SETS.values() for path in cassette_files(make()))


# A request's token limit, by each endpoint's name for it, first found first.
LIMIT_KEYS = ("max_output_tokens", "max_tokens", "max_completion_tokens")


def request_limit(body) -> int | None:
    """The token limit a request body asks for, whatever its endpoint calls it; None without one
    (a JSON true is no number, to llama-server's parser as here)."""
    if not isinstance(body, dict):
        return None
    found = (body.get(key) for key in LIMIT_KEYS)
    return next((value for value in found if isinstance(value, int) and not isinstance(value, bool)), None)


@dataclass(eq=False)
class Interaction:
    """One recorded request and its response. Compared by identity, so it can key caches."""

    scenario: str
    method: str
    path: str
    request_raw: bytes | None  # the body as sent, when the cassette kept it as a string
    request_json: object  # the body as JSON, or None when absent or not JSON
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    # What a matcher looks this recording up by, when the loader was given a ``keys_of`` to compute
    # it (kept in the cassette index, so a start at 10,000 recordings need not compute it again).
    match_keys: tuple | None = None

    @property
    def stream(self) -> bool:
        return isinstance(self.request_json, dict) and self.request_json.get("stream") is True

    @cached_property
    def turn(self) -> int:
        """Which turn of a conversation this request asked for, read from its own input."""
        return turn_of(self.path, self.request_json)

    @property
    def is_event_stream(self) -> bool:
        return sse.is_event_stream(self.body)

    @cached_property
    def events(self) -> list[sse.Event]:
        return sse.parse_stream(self.body)

    @cached_property
    def body_json(self):
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):
            return None

    @property
    def limit(self) -> int | None:
        """The token limit the request asked for, whatever the endpoint calls it."""
        return request_limit(self.request_json)

    def describe(self) -> str:
        return f"{self.method} {self.path} (stream={str(self.stream).lower()})"


@dataclass(eq=False)
class Scenario:
    name: str
    source: Path
    interactions: list[Interaction] = field(default_factory=list)
    setup: str = DEFAULT_SETUP  # the server set-up it was recorded from (see setup_of)
    sweep: str | None = None  # the sweep it is one position of (recordings.sweeps), at its limit

    def find(self, method: str, path: str, stream: bool, turn: int = 1) -> Interaction | None:
        for interaction in self.interactions:
            if (
                interaction.method == method
                and interaction.path == path
                and interaction.stream == stream
                and (method == "GET" or interaction.turn == turn)
            ):
                return interaction
        return None

    def chat_twin(self, interaction: Interaction) -> Interaction | None:
        """The chat completion recorded beside a Responses interaction (same turn), same stream flag first."""
        turn = interaction.turn
        return self.find("POST", CHAT_PATH, interaction.stream, turn) or self.find(
            "POST", CHAT_PATH, not interaction.stream, turn
        )

    @cached_property
    def turns(self) -> int:
        """How many turns the scenario records: 1, or more for a conversation."""
        return max((i.turn for i in self.interactions if i.method == "POST"), default=1)

    def twin_finish_reason(self, interaction: Interaction) -> str | None:
        twin = self.chat_twin(interaction)
        return chat_finish_reason(twin) if twin is not None else None

    def stopped_by_limit(self) -> bool | None:
        """Whether the server itself said the reply was cut by its limit, where it said so honestly:
        the chat twin's ``finish_reason: "length"``, or ``/v1/messages``' ``stop_reason:
        "max_tokens"``. None where no recording of it says either way."""
        for interaction in self.interactions:
            if interaction.path == CHAT_PATH and not interaction.stream:
                reason = chat_finish_reason(interaction)
                if reason is not None:
                    return reason == "length"
            if interaction.path == MESSAGES_PATH and not interaction.stream and isinstance(interaction.body_json, dict):
                stop = interaction.body_json.get("stop_reason")
                if isinstance(stop, str):
                    return stop == "max_tokens"
        return None

    @property
    def limit(self) -> int | None:
        """The token limit of its first request that has one."""
        return next((i.limit for i in self.interactions if i.limit is not None), None)

    @property
    def endpoints(self) -> list[str]:
        seen = []
        for interaction in self.interactions:
            if interaction.path not in seen:
                seen.append(interaction.path)
        return seen


def _choices(chunk) -> list[dict]:
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    return [choice for choice in choices if isinstance(choice, dict)] if isinstance(choices, list) else []


def chat_finish_reason(interaction: Interaction) -> str | None:
    """``finish_reason`` of a recorded chat completion, streamed or not; None when it has none."""
    reason = None
    if interaction.is_event_stream:
        for event in interaction.events:
            for choice in _choices(event.json()):
                reason = choice.get("finish_reason") or reason
    else:
        choices = _choices(interaction.body_json)
        reason = choices[0].get("finish_reason") if choices else None
    return reason if isinstance(reason, str) else None


def _request_body(body) -> tuple[bytes | None, object]:
    """vcrpy keeps a ``json=`` body as a mapping and a ``data=`` body as a string: accept both."""
    if body is None or isinstance(body, (dict, list)):
        return None, body
    raw = body if isinstance(body, bytes) else str(body).encode("utf-8")
    try:
        return raw, json.loads(raw)
    except ValueError:
        return raw, None


def _header_values(values) -> list:
    """vcrpy writes a list of values per header; a hand-edited cassette may hold one plain string."""
    return [values] if isinstance(values, str) else list(values)


def _interaction(scenario: str, request, response) -> Interaction:
    raw, parsed = _request_body(request.body)
    headers = tuple(
        (name, value) for name, values in (response.get("headers") or {}).items() for value in _header_values(values)
    )
    body = response["body"]["string"]
    return Interaction(
        scenario=scenario,
        method=request.method.upper(),
        path=request.parsed_uri.path,
        request_raw=raw,
        request_json=parsed,
        status=int(response["status"]["code"]),
        reason=str(response["status"].get("message", "")),
        headers=headers,
        body=body if isinstance(body, bytes) else (body or "").encode("utf-8"),
    )


class _Parsed:
    """A vcrpy serializer that hands over data mockllama has already parsed safely."""

    def __init__(self, data):
        self.data = data

    def deserialize(self, _text: str):
        return self.data


def read_cassette(path: Path):
    """vcrpy's (requests, responses), from YAML parsed safely here and read by vcrpy's own deserializer."""
    # YAML is imported by the first cassette read: a start from the cassette index reads none.
    import yaml

    from mockllama.recordings.safe_yaml import UnsafeYaml, load_yaml, load_yaml_file

    try:
        size = path.stat().st_size
        if size == 0:
            raise CassetteError(path, "the file is empty")
        if size > STREAMED_CASSETTE_BYTES:
            data = load_yaml_file(path, size)
        else:
            data = load_yaml(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise CassetteError(path, "the file is not UTF-8 text") from None
    except OSError as err:
        reason = "no such file" if isinstance(err, FileNotFoundError) else f"unreadable ({err.strerror or err})"
        raise CassetteError(path, reason) from None
    except UnsafeYaml as err:
        raise CassetteError(path, str(err)) from None
    except yaml.YAMLError as err:
        raise CassetteError(path, f"not valid YAML ({' '.join(str(err).split())})") from None
    except RecursionError:
        raise CassetteError(path, "its YAML nests too deeply to read") from None
    # Imported here: importing vcr loads its patches for every HTTP library, which slows every
    # start, and a start from the cassette index reads no YAML at all.
    from vcr.serialize import deserialize

    try:
        loaded = deserialize("", _Parsed(data))  # _Parsed hands over the data: no text is read again
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        raise CassetteError(path, f"not a vcrpy cassette (no usable 'interactions' list: {err!r})") from None
    return loaded[0], loaded[1]


def load_cassette(path: Path, setup: str = DEFAULT_SETUP) -> Scenario:
    """Read one cassette: YAML parsed safely, then vcrpy's own reading of it, then checked for use."""
    path = Path(path)
    requests, responses = read_cassette(path)
    if not requests:
        raise CassetteError(path, "the cassette holds no interactions")
    problem = name_problem(path.stem)
    if problem:
        raise CassetteError(path, problem)
    scenario = Scenario(name=path.stem, source=path, setup=setup)
    for number, (request, response) in enumerate(zip(requests, responses), start=1):
        try:
            interaction = _interaction(scenario.name, request, response)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise CassetteError(path, f"interaction {number} is malformed ({err!r})") from None
        raw = interaction.request_raw  # a body sent as text with too few brackets is not walked
        if (raw is None or not cannot_nest_deeper(raw)) and depth_exceeds(interaction.request_json, MAX_JSON_DEPTH):
            raise CassetteError(path, f"interaction {number}: its request body nests more than {MAX_JSON_DEPTH} levels")
        problem = reply_problem(interaction)
        if problem:
            raise CassetteError(path, f"interaction {number} ({interaction.describe()}): {problem}")
        scenario.interactions.append(interaction)
    return scenario


def _walk(directory: Path, top: Path, root: Path, seen: set[str]) -> list[Path]:
    """The cassette files under ``directory``, links followed (each real folder once) but refused
    when they lead outside ``root``, the real ``top``. os.scandir, not Path.rglob: it reads each
    entry's type with its name, not with a call of its own."""
    found = []
    with os.scandir(directory) as entries:
        for entry in entries:
            is_dir = entry.is_dir()
            is_cassette = not is_dir and os.path.splitext(entry.name)[1] in CASSETTE_SUFFIXES and entry.is_file()
            if entry.is_symlink() and (is_dir or is_cassette):
                real = Path(entry.path).resolve()
                if not real.is_relative_to(root):
                    raise CassetteError(Path(entry.path), f"it links outside the cassette directory {top}, to {real}")
            if is_dir:
                real_dir = os.path.realpath(entry.path)
                if real_dir not in seen:
                    seen.add(real_dir)
                    found += _walk(Path(entry.path), top, root, seen)
            elif is_cassette:
                found.append(Path(entry.path))
    return found


def cassette_files(directory: Path) -> list[Path]:
    """The cassettes under ``directory``; a link that leads outside it is refused, not followed."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CassetteError(directory, "no such directory")
    root = directory.resolve()
    files = sorted(_walk(directory, directory, root, {str(root)}), key=str)
    if not files:
        raise CassetteError(directory, "the directory holds no cassettes (*.yaml)")
    return files


@contextmanager
def collection_paused(keep: bool = False):
    """No garbage collection while hundreds of thousands of objects are made, none of them garbage:
    each collection would walk them all, again and again as they grow. ``keep``: what was made
    lives on (loaded recordings live as long as the server), so it is moved out of the collector's
    sight (``gc.freeze``): else the first collection after the pause walks it all."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
        if keep:  # only on success: what a failed load made is garbage, and must stay collectable
            gc.freeze()
    finally:
        if collecting:
            gc.enable()


class IndexedInteraction(Interaction):
    """An interaction from the cassette index: its reply body is read from the index when first used,
    so that thousands of recordings do not all sit in memory."""

    @property
    def body(self) -> bytes:
        body = self.__dict__.get("_body")
        if body is None:
            bodies, offset, length = self.__dict__["_body_at"]
            body = self.__dict__["_body"] = bodies.read(offset, length)
        return body

    @body.setter
    def body(self, value: bytes | None) -> None:
        self.__dict__["_body"] = value


def _record(scenario: Scenario) -> list[tuple]:
    """A loaded scenario as plain values for the index: each interaction with its turn and match keys."""
    return [
        (i.method, i.path, i.request_raw, i.request_json, i.status, i.reason, i.headers, i.turn, i.match_keys, i.body)
        for i in scenario.interactions
    ]


def _from_record(path: Path, record: list[tuple], bodies, setup: str) -> Scenario:
    scenario = Scenario(name=path.stem, source=path, setup=setup)
    for method, uri_path, raw, parsed, status, reason, headers, turn, keys, body_at in record:
        interaction = IndexedInteraction.__new__(IndexedInteraction)  # the fields set at once: 10,000s of these
        interaction.__dict__.update(
            scenario=scenario.name,
            method=method,
            path=uri_path,
            request_raw=raw,
            request_json=parsed,
            status=status,
            reason=reason,
            headers=tuple(tuple(pair) for pair in headers),
            _body_at=(bodies, *body_at),
            turn=turn,  # the cached property, as computed when the file was read
        )
        if keys is not None:
            interaction.__dict__["match_keys"] = tuple(keys)
        scenario.interactions.append(interaction)
    return scenario


def _provenance_setup(path: Path) -> str | None:
    """The "setup" named by one provenance.json, None where there is no such file. The file is
    untrusted input like the cassettes: one that cannot be read names no set-up, never an error."""
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(MAX_PROVENANCE_BYTES + 1)[:MAX_PROVENANCE_BYTES])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        return DEFAULT_SETUP
    setup = data.get("setup") if isinstance(data, dict) else None
    return setup if isinstance(setup, str) and 0 < len(setup.strip()) <= 100 else DEFAULT_SETUP


def setup_of(folder: Path, top: Path, known: dict[Path, str]) -> str:
    """The set-up of the recordings in ``folder``: the nearest provenance.json in it or above it,
    up to the cassette directory ``top``. ``known`` remembers each folder's answer."""
    if folder in known:
        return known[folder]
    named = _provenance_setup(folder / PROVENANCE)
    if named is None:
        named = DEFAULT_SETUP if folder == top or folder.parent == folder else setup_of(folder.parent, top, known)
    known[folder] = named
    return named


KeysOf = Callable[[Interaction], "tuple | None"]


def load_directory(directory: Path, keys_of: KeysOf | None = None) -> list[Scenario]:
    """The cassettes under ``directory``: from the index where a file is as it was when indexed,
    read and checked afresh where not (see recordings.index); the index is rewritten when anything
    changed. ``keys_of`` (the matcher's, passed in by whoever serves) gives each interaction its
    ``match_keys``; the index keeps them, so it is kept apart per ``keys_of``."""
    directory = Path(directory)
    files = cassette_files(directory)
    with collection_paused():
        return _load_directory(directory, files, keys_of)


def _variant(keys_of: KeysOf | None) -> str:
    return "plain" if keys_of is None else f"{keys_of.__module__}.{keys_of.__qualname__}"


# Cassettes read together, in one worker (recordings.parallel): enough that handing them over costs
# little, few enough that their records come back, and are written out, all along.
BATCH = 32


def _read_batch(jobs: list[tuple[Path, str, KeysOf | None]]) -> list[list[tuple]]:
    """Cassettes read and checked, as their index records (bodies included): run in a worker.
    Equal parts of their match keys are made one object (see _shared)."""
    records: list[list[tuple]] = []
    seen: dict = {}
    with collection_paused():
        for path, setup, keys_of in jobs:
            scenario = load_cassette(path, setup)
            if keys_of is not None:
                for interaction in scenario.interactions:
                    interaction.match_keys = _shared(keys_of(interaction), seen)
            records.append(_record(scenario))
    return records


def _shared(keys: tuple | None, seen: dict) -> tuple | None:
    """Match keys with each item of their tuples one object wherever it is equal (the keys' parts
    for the 404's search: thousands of recordings share most of them, the system prompt, the
    tools). pickle and marshal write a shared object once, so the index and every start that
    reads it hold each part once per batch of cassettes, not once per recording."""
    if keys is None:
        return None
    return tuple(_shared_items(value, seen) if isinstance(value, tuple) else value for value in keys)


def _shared_items(value: tuple, seen: dict) -> tuple:
    """``value`` with its items shared; the same tuple again (match_keys reuses a canonical key's
    parts) is looked up by its id, kept in ``seen`` with it (so the id stays its own)."""
    made = seen.get(id(value))
    if made is None:
        made = seen[id(value)] = (value, tuple(seen.setdefault(item, item) for item in value))
    return made[1]


def _load_directory(directory: Path, files: list[Path], keys_of: KeysOf | None) -> list[Scenario]:
    variant = _variant(keys_of)
    indexed, old_bodies = read_index(directory, variant)
    prefix = len(str(directory)) + 1
    setups: dict[Path, str] = {}
    planned: list[tuple] = []
    for path in files:
        relative = str(path)[prefix:].replace(os.sep, "/")
        now = stamp(path)
        planned.append(
            (path, relative, now, setup_of(path.parent, directory, setups), unchanged(indexed.get(relative), now))
        )
    if len(files) == len(indexed) and all(record is not None for *_, record in planned):
        return _positions([_from_record(path, record, old_bodies, setup) for path, _, _, setup, record in planned])
    # Something changed: the files not indexed as they are now are read (on every core when they
    # are many), and a new index written as they come, reply bodies straight to the file.
    jobs = [(path, setup, keys_of) for path, _, _, setup, record in planned if record is None]
    batches = map_in_order(_read_batch, [jobs[start : start + BATCH] for start in range(0, len(jobs), BATCH)])
    afresh = itertools.chain.from_iterable(batches)
    # Each scenario is made as its record comes, while the workers read on (not all at the end).
    writer, scenarios = IndexWriter(directory, variant), []
    try:
        for path, relative, now, setup, record in planned:
            if record is not None:  # indexed before: its bodies copied from the old index
                assert old_bodies is not None  # read_index gives records only with their bodies
                record = [(*fields, old_bodies.read(*body_at)) for *fields, body_at in record]
            stored = writer.add(relative, now, record if record is not None else next(afresh))
            scenarios.append(_from_record(path, stored, writer.bodies, setup))
    except BaseException:
        writer.abort()
        batches.close()
        raise
    writer.finish()
    if old_bodies is not None:
        old_bodies.close()
    return _positions(scenarios)


def _positions(scenarios: list[Scenario]) -> list[Scenario]:
    """Each sweep's cassette as its positions, every other scenario as it is."""
    return [position for scenario in scenarios for position in sweep_positions(scenario)]


def sweep_positions(scenario: Scenario) -> list[Scenario]:
    """A sweep's cassette (``NAME.sweep.yaml``) as one scenario a position, ``NAME@LIMIT``, in the
    order of their limits; any other scenario alone. Every interaction of a sweep asks for a limit:
    that is how its position is known."""
    sweep = sweep_of_file(scenario.source)
    if sweep is None:
        return [scenario]
    positions: dict[int, Scenario] = {}
    for number, interaction in enumerate(scenario.interactions, start=1):
        limit = interaction.limit
        if limit is None or limit < 1:
            raise CassetteError(
                scenario.source,
                f"interaction {number} ({interaction.describe()}) asks for no token limit of at least 1, "
                "and a sweep's position is its limit",
            )
        position = positions.get(limit)
        if position is None:
            name = position_name(sweep, limit)
            position = positions[limit] = Scenario(name, scenario.source, setup=scenario.setup, sweep=sweep)
        interaction.scenario = position.name
        position.interactions.append(interaction)
    return [positions[limit] for limit in sorted(positions)]


# Scenario families (a name's first word) in the order they read best: plain text first, then the
# retry ladder, tool calls, the Anthropic endpoint and reasoning; any other family after them, by name.
FAMILIES = ("text", "ladder", "tool", "poem", "messages", "thinking")
# What a name says of its limit or outcome, after its series: text-cut-8, tool-agents-finishes.
_OUTCOME = re.compile(r"-(cut-\d+|finishes|exact-limit)(-.*)?$")


def reading_order(name: str, limit: int | None) -> tuple:
    """A scenario's place in a list that reads well: by family, then series (``tool`` before
    ``tool-conversation``), then limit (none last), then name."""
    family = name.split("-")[0]
    series = _OUTCOME.sub("", name)
    known = FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)
    return known, family, series != family, series, limit is None, limit or 0, name


def in_reading_order(scenarios: dict[str, Scenario]) -> list[Scenario]:
    """The scenarios by family, then limit (``reading_order``)."""
    return sorted(scenarios.values(), key=lambda scenario: reading_order(scenario.name, scenario.limit))


def load_scenarios(directories: list[Path], keys_of: KeysOf | None = None) -> dict[str, Scenario]:
    """Every cassette under the given directories, by scenario name; a name may appear once.
    ``keys_of``: see load_directory."""
    scenarios: dict[str, Scenario] = {}
    for directory in directories:
        for scenario in load_directory(directory, keys_of):
            path = scenario.source
            if scenario.name in scenarios:
                other = scenarios[scenario.name].source
                raise CassetteError(path, f"scenario name '{scenario.name}' is already taken by {other}")
            scenarios[scenario.name] = scenario
    return scenarios
