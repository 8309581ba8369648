"""Choosing the recorded interaction for an incoming request.

Order, first that applies:
1. a body that is not JSON is answered by a recording with the very same bytes, else a 400;
2. explicit selection: the ``X-Mockllama-Scenario`` header, or a ``model`` that names a scenario
   (or a sweep, whose position is then the request's own limit);
3. the request in canonical form (what llama-server generates from, see ``canonical``) equals a
   recorded one: an exact lookup (ignoring key order only against a recording that stored its
   body as a mapping, and so lost the order it was sent in);
4. a later turn of a conversation whose first turn it shares;
5. a request that differs from a sweep's positions only by a limit past where its reply finishes:
   the finished position, as llama-server sends the same finished reply for any larger limit
   (``recordings.sweeps``);
6. a 400 for a field of the wrong type;
7. the ``--fallback`` scenario;
8. a 404 that lists the nearest scenarios and how each differs, in the client's own words
   (``differences``): another prompt, or tools on one side only, is farther than any number of
   other differences.

Within a scenario, the turn is read from the request's own input (the model replies it already
carries), never from server state: parallel tests and retries stay independent, and a body
always selects the same recording, so selections can be remembered.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mockllama.matching.bounded_cache import ByteBoundedMemo
from mockllama.matching.canonical import canonical_request
from mockllama.matching.differences import count_of, describe, nearest
from mockllama.matching.keys import conversation_key, exact_key, limitless_key, unordered_key
from mockllama.matching.nearness import Candidates, Fingerprints
from mockllama.matching.pipeline import keys_for
from mockllama.matching.turns import OwnReplies, own_replies, own_turn
from mockllama.matching.validation import stream_type_error, type_error
from mockllama.recordings.cassettes import DEFAULT_SETUP, Interaction, Scenario, collection_paused, request_limit
from mockllama.recordings.chat_twin import turn_of
from mockllama.recordings.sweeps import position_name
from mockllama.wire.errors import RequestError

# Larger bodies are matched afresh each time, so the memory of past selections stays bounded.
REMEMBERED_BODY_BYTES = 64 * 1024
# The 404 names at most this many of the equally near scenarios (and counts the rest).
MAX_LISTED = 10
# How alike a model or header must be to a scenario's name to be suggested as a typo of it
# (difflib's ratio: poem-cut-16 is 0.82 of poem-cut-20; gpt-4o-mini is far from every name).
NEAR_NAME = 0.75


@dataclass(frozen=True)
class Selection:
    interaction: Interaction
    how: str  # "header", "model", "match", "conversation", "sweep-end", "recorded-bytes", "fallback" or "route"
    turn: int = 1  # the conversation turn answered (1 for a single-turn scenario)


def json_text(raw: bytes) -> str:
    """A request body as llama-server's JSON parser (nlohmann::json) reads it: UTF-8, a UTF-8 byte
    order mark skipped. Python's ``json.loads`` would detect UTF-16 and UTF-32 in bytes and read
    them; llama-server answers them with a 400 parse error (tests/live/test_live_hardening.py), and
    so does mockllama: the decoding error, or the NUL bytes of UTF-16 read as UTF-8, is no JSON."""
    return raw.decode("utf-8").removeprefix("\ufeff")


def _no_constant(name: str):
    raise ValueError(f"invalid literal {name}: JSON has no NaN or Infinity")


def _finite(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"number overflow parsing {text!r}")
    return number


def parse_request_json(raw: bytes):
    """A request body parsed as llama-server parses it (nlohmann::json): ``NaN`` and ``Infinity``
    are no JSON, and a number too large for a double overflows; Python's json would take all three
    (tests/live/test_live_hardening.py holds llama-server's 400 for each)."""
    return json.loads(json_text(raw), parse_constant=_no_constant, parse_float=_finite)


def _key_bytes(args: tuple) -> int:
    method, path, raw, scenario_name = args
    return len(method) + len(path) + len(raw) + len(scenario_name or "")


def served_setup(scenarios: dict[str, Scenario], setup: str | None = None) -> str:
    """The server set-up whose recordings answer ordinary requests: ``setup`` when asked for (it
    must be among the loaded ones), else the default set-up, else the only (or first) one loaded."""
    setups = sorted({scenario.setup for scenario in scenarios.values()})
    if setup is not None:
        if setups and setup not in setups:
            raise ValueError(f"no loaded recording is of the set-up {setup!r}; loaded: {', '.join(setups)}")
        return setup
    return DEFAULT_SETUP if DEFAULT_SETUP in setups or not setups else setups[0]


class Matcher:
    def __init__(self, scenarios: dict[str, Scenario], fallback: str | None = None, setup: str | None = None):
        if fallback is not None and fallback not in scenarios:
            known = ", ".join(sorted(scenarios))
            raise ValueError(f"the fallback scenario {fallback!r} is not among the loaded scenarios: {known}")
        self.scenarios = scenarios
        self.fallback = fallback
        # Matching answers from one server set-up: a recording depends on the server's configuration
        # (its chat template above all), which no request carries. The others are reached by name.
        self.setup = served_setup(scenarios, setup)
        self._elsewhere: dict[tuple[str, str, str], Interaction] = {}  # other set-ups' recordings, by key
        self.generation = 0  # counts the recordings added since: what was built from the old set is stale
        self._by_key: dict[tuple[str, str, str], Interaction] = {}
        self._by_bytes: dict[tuple[str, str, bytes], Interaction] = {}
        self._by_route: dict[tuple[str, str], list[Interaction]] = {}
        self._conversations: dict[tuple[str, str, str], str] = {}  # later-turn key -> scenario
        self._orderless: dict[tuple[str, str, str], Interaction] = {}  # bodies stored as mappings
        self._replies: dict[str, tuple[Scenario, OwnReplies]] = {}  # the replies of scenarios chosen by name
        self._fingerprints = Fingerprints()  # the 404's nearest search (prepare_nearest)
        self._sweeps: dict[str, Scenario] = {}  # each served sweep's last position, by the sweep's name
        self._sweep_ends: dict[tuple[str, str, str], Interaction] | None = None  # made on the first miss
        with collection_paused():
            for scenario in scenarios.values():
                self._index(scenario, first_wins=True)
        # Clients repeat the same request bodies, and a body always selects the same recording:
        # remember recent answers, so that a request sent again does no JSON work; 16 MiB of keys at most.
        self._remembered = ByteBoundedMemo(self._select, _key_bytes)

    def _index(self, scenario: Scenario, first_wins: bool) -> None:
        served = scenario.setup == self.setup
        if scenario.sweep is not None and served:
            last = self._sweeps.get(scenario.sweep)
            if last is None or (scenario.limit or 0) > (last.limit or 0):
                self._sweeps[scenario.sweep] = scenario
                self._sweep_ends = None
        for interaction in scenario.interactions:
            route = (interaction.method, interaction.path)
            keys = keys_for(interaction) if interaction.request_json is not None else None
            if not served and interaction.method != "GET":
                if keys is not None:  # only for the 404 to point at
                    self._elsewhere.setdefault((*route, keys[0]), interaction)
                continue
            self._by_route.setdefault(route, []).append(interaction)  # a GET's server info: any set-up's
            entries: list[tuple[dict, tuple, object]] = []
            if interaction.request_raw is not None:
                entries.append((self._by_bytes, (*route, interaction.request_raw), interaction))
            if keys is not None:
                key, orderless, later, _parts = keys
                entries.append((self._by_key, (*route, key), interaction))
                if orderless is not None:
                    entries.append((self._orderless, (*route, orderless), interaction))
                if later is not None:
                    entries.append((self._conversations, (*route, later), interaction.scenario))
            for index, entry, value in entries:
                if first_wins:
                    index.setdefault(entry, value)
                else:
                    index[entry] = value

    def add(self, scenario: Scenario) -> None:
        """Serve a new recording from now on, in place of any scenario of the same name; where
        it records the same request as another scenario, the new recording wins."""
        old = self.scenarios.get(scenario.name)
        if old is not None:
            gone = {id(interaction) for interaction in old.interactions}
            indexes: tuple[dict[Any, Interaction], ...] = (
                self._by_key,
                self._by_bytes,
                self._orderless,
                self._elsewhere,
            )
            for index in indexes:
                for key in [k for k, i in index.items() if id(i) in gone]:
                    del index[key]
            for key in [k for k, name in self._conversations.items() if name == old.name]:
                del self._conversations[key]
            for interactions in self._by_route.values():
                interactions[:] = [i for i in interactions if id(i) not in gone]
        self.scenarios[scenario.name] = scenario
        self._index(scenario, first_wins=False)
        self._remembered.cache_clear()
        self._fingerprints.clear()
        self.generation += 1

    def select(self, method: str, path: str, raw: bytes, scenario_name: str | None = None) -> Selection:
        if len(raw) > REMEMBERED_BODY_BYTES:
            return self._select(method, path, raw, scenario_name)
        return self._remembered(method, path, raw, scenario_name)

    def _select(self, method: str, path: str, raw: bytes, scenario_name: str | None) -> Selection:
        if method == "GET":
            return self._select_get(path, scenario_name)
        try:
            body = parse_request_json(raw)
        except ValueError as err:  # UnicodeDecodeError included
            recorded = self._by_bytes.get((method, path, raw))
            if recorded is not None:
                return Selection(recorded, "recorded-bytes")
            raise RequestError(400, f"mockllama: the request body is not valid JSON ({err})") from None
        wrong_stream = stream_type_error(path, body)  # before matching: "yes" would match stream=false
        if wrong_stream:
            raise RequestError(400, wrong_stream)
        explicit = self._explicit(method, path, body, scenario_name)
        if explicit is not None:
            return explicit
        canonical = canonical_request(path, body)
        key = exact_key(canonical)
        recorded = self._by_key.get((method, path, key))
        if recorded is None and self._orderless:
            recorded = self._orderless.get((method, path, unordered_key(canonical)))
        if recorded is not None:
            return Selection(recorded, "match", recorded.turn)
        later = conversation_key(canonical, turn_of(path, body))
        if later is not None and (method, path, later) in self._conversations:
            return self._turn_of(self._conversations[(method, path, later)], method, path, body, "conversation")
        finished = self._past_the_end(method, path, body, canonical)
        if finished is not None:
            return Selection(finished, "sweep-end")
        problem = type_error(path, body)
        if problem:
            raise RequestError(400, problem)
        if self.fallback is not None:
            return self._turn_of(self.fallback, method, path, body, "fallback")
        raise RequestError(404, self._no_match_message(method, path, body, key))

    def _past_the_end(self, method: str, path: str, body, canonical) -> Interaction | None:
        """The finished position of a sweep this request (``canonical``: its canonical form) differs
        from only by a larger limit."""
        if not self._sweeps or not isinstance(body, dict):
            return None
        if self._sweep_ends is None:
            self._sweep_ends = {
                (i.method, i.path, limitless_key(canonical_request(i.path, i.request_json))): i
                for last in self._sweeps.values()
                for i in last.interactions
                if isinstance(i.request_json, dict)
            }
        finished = self._sweep_ends.get((method, path, limitless_key(canonical)))
        limit = request_limit(body)
        if finished is None or finished.limit is None or limit is None or limit <= finished.limit:
            return None
        return finished

    def _select_get(self, path: str, scenario_name: str | None) -> Selection:
        candidates = self._by_route.get(("GET", path), [])
        for interaction in candidates:
            if interaction.scenario == scenario_name:
                return Selection(interaction, "header")
        if not candidates:
            raise RequestError(404, f"mockllama: no cassette records GET {path}.")
        served = (i for i in candidates if self.scenarios[i.scenario].setup == self.setup)
        return Selection(next(served, candidates[0]), "route")

    def _explicit(self, method, path, body, scenario_name) -> Selection | None:
        if scenario_name is not None:
            scenario_name = self._position_asked(scenario_name, body)
            if scenario_name not in self.scenarios:
                known = ", ".join(self._known())
                raise RequestError(
                    404,
                    f"mockllama: no scenario named {scenario_name!r} (from X-Mockllama-Scenario)."
                    f"{self._did_you_mean(scenario_name)} Known: {known}.",
                )
            return self._turn_of(scenario_name, method, path, body, "header")
        model = body.get("model") if isinstance(body, dict) else None
        if isinstance(model, str):
            model = self._position_asked(model, body)
            if model in self.scenarios:
                return self._turn_of(model, method, path, body, "model")
        return None

    def _known(self) -> list[str]:
        """The scenario names a 404 lists: a sweep once, with how its positions are named."""
        lasts: dict[str, int] = {}
        for scenario in self.scenarios.values():
            if scenario.sweep is not None:
                lasts[scenario.sweep] = max(lasts.get(scenario.sweep, 0), scenario.limit or 0)
        single = [name for name, scenario in self.scenarios.items() if scenario.sweep is None]
        return sorted(single + [f"{name} (or {name}@N, N 1-{last})" for name, last in lasts.items()])

    def _position_asked(self, name: str, body) -> str:
        """A sweep named without a position: the position the request's own limit asks for (the
        finished one past its end, or with no limit); any other name as it is."""
        last = self._sweeps.get(name)
        if last is None or last.limit is None:
            return name
        limit = request_limit(body)
        return position_name(name, last.limit if limit is None or limit > last.limit else limit)

    def _turn_of(self, name: str, method: str, path: str, body, how: str) -> Selection:
        """The recorded turn of scenario ``name`` that this request's own input asks for."""
        chosen_by = {
            "header": "X-Mockllama-Scenario",
            "model": "model",
            "fallback": "--fallback",
            "conversation": "its first turn",
        }[how]
        scenario = self.scenarios[name]
        stream = isinstance(body, dict) and body.get("stream") is True
        # Matched by its first turn, the history is the recording's own; chosen by name, only the
        # scenario's own replies in it count (matching.turns).
        turn = turn_of(path, body) if how == "conversation" else own_turn(path, body, self._own_replies(scenario))
        if turn > scenario.turns:
            raise RequestError(404, past_the_last_turn(scenario, turn, chosen_by))
        interaction = scenario.find(method, path, stream, turn)
        if interaction is None:
            recorded = "; ".join(sorted({_recorded(i, scenario) for i in scenario.interactions}))
            at_turn = f" at turn {turn}" if scenario.turns > 1 else ""
            raise RequestError(
                404,
                f"mockllama: scenario {name!r} (chosen by {chosen_by}) has no recorded "
                f"{method} {path} with stream={str(stream).lower()}{at_turn}. It records: {recorded}.",
            )
        return Selection(interaction, how, turn)

    def _own_replies(self, scenario: Scenario) -> OwnReplies:
        replies = self._replies.get(scenario.name)
        if replies is None or replies[0] is not scenario:
            replies = self._replies[scenario.name] = (scenario, own_replies(scenario))
        return replies[1]

    def _other_setup(self, method: str, path: str, key: str) -> str:
        """A sentence naming a recording of another server set-up that matches (``key``: the
        request's exact key), or ""."""
        other = self._elsewhere.get((method, path, key))
        if other is None:
            return ""
        setup = self.scenarios[other.scenario].setup
        return (
            f" A recording of another server set-up matches: {other.scenario!r}, recorded from the set-up "
            f"{setup!r} (served: {self.setup!r}). A set-up's chat template changes what the server generates "
            f"and no request says which one it has, so only the served set-up answers by prompt. Select "
            f'{other.scenario!r} by name ("model" or X-Mockllama-Scenario), or serve that set-up with '
            f"--setup {setup}."
        )

    def _did_you_mean(self, name: str) -> str:
        """A question naming the scenarios ``name`` is a likely typo of (poem-cut-16 for poem-cut-20), or ""."""
        close = difflib.get_close_matches(name, self._alike_in_length(name), n=3, cutoff=NEAR_NAME)
        return f" Did you mean {' or '.join(repr(candidate) for candidate in close)}?" if close else ""

    def _alike_in_length(self, name: str) -> list[str]:
        """The scenario names difflib would not turn away for their length alone: its first test
        (``real_quick_ratio``, in its own words here) compares lengths only, yet it builds a matcher
        for every name first."""
        size = len(name)
        fits = {
            length: (2.0 * min(size, length) / (size + length) if size + length else 1.0) >= NEAR_NAME
            for length in {len(other) for other in self.scenarios}
        }
        return [other for other in self.scenarios if fits[len(other)]]

    def _nearest_candidates(self, method: str, path: str, stream: bool) -> Candidates:
        return self._fingerprints.of(
            (method, path, stream),
            lambda: [
                i
                for i in self._by_route.get((method, path), [])
                if i.stream == stream and isinstance(i.request_json, dict) and i.status < 400
            ],
        )

    def prepare_nearest(self) -> Iterator[tuple[str, str, bool]]:
        """Gather the 404's candidates (``nearness.Fingerprints``) now rather than on a route's
        first miss, one route and stream flag a step, so that a server can do it between requests.
        Yields each (method, path, stream) gathered."""
        for method, path in list(self._by_route):
            if method != "GET":
                for stream in (False, True):
                    self._nearest_candidates(method, path, stream)
                    yield method, path, stream

    def _one_a_sweep(self, closest: list) -> list:
        """The nearest recordings with one position of each sweep: its others differ alike."""
        kept, sweeps = [], set()
        for interaction, differences in closest:
            sweep = self.scenarios[interaction.scenario].sweep
            if sweep is None or sweep not in sweeps:
                kept.append((interaction, differences))
                sweeps.add(sweep)
        return kept

    def _named(self, interaction: Interaction) -> str:
        sweep = self.scenarios[interaction.scenario].sweep
        last = self._sweeps.get(sweep) if sweep is not None else None
        if last is None:
            return repr(interaction.scenario)
        return f"{interaction.scenario!r} (a position of the sweep {sweep!r}, {sweep}@1 to {last.name}, one a limit)"

    def _no_match_message(self, method: str, path: str, body: dict, key: str) -> str:
        stream = body.get("stream") is True
        candidates = self._nearest_candidates(method, path, stream)
        how_to = (
            "Select a scenario whatever the prompt with the header 'X-Mockllama-Scenario: NAME' or with "
            '"model": "NAME" (list them with \'mockllama scenarios\'), start the server with '
            "--fallback NAME, or record this request from a live llama-server and serve it with --cassettes DIR."
        )
        if not candidates:
            return (
                f"mockllama: no recording matches {method} {path} (stream={str(stream).lower()}); "
                f"no scenario records that endpoint with that stream flag. {how_to}"
            )
        weight, near, closest = nearest(path, body, candidates, MAX_LISTED)
        listed = "; ".join(
            f"{self._named(i)}{_turn_label(i)}: {describe(differences)}"
            for i, differences in self._one_a_sweep(closest)
        )
        if near > MAX_LISTED:  # thousands of recordings can be equally near: the count says so
            listed += f"; and {near - MAX_LISTED} more as near"
        count = count_of(weight)
        differ = f"{count} difference{'s' if count != 1 else ''}"
        label = (
            f"Nearest scenario ({differ})" if near == 1 else f"Nearest scenarios ({near}, equally near, {differ} each)"
        )
        model = body.get("model")
        hints = self._other_setup(method, path, key)
        near_name = self._did_you_mean(model) if isinstance(model, str) else ""
        if near_name:
            hints += f" The model {model!r} names no scenario, so the request was matched by its prompt.{near_name}"
        return (
            f"mockllama: no recording matches this {method} {path} request (stream={str(stream).lower()}), "
            f"compared as llama-server sees it (see 'Which requests match' in the docs, docs/matching.md).{hints} "
            f"{label}: {listed}. {how_to}"
        )


def _turn_label(interaction: Interaction) -> str:
    return f" (turn {interaction.turn})" if interaction.turn > 1 else ""


def _recorded(interaction: Interaction, scenario: Scenario) -> str:
    turn = f" turn {interaction.turn}" if scenario.turns > 1 else ""
    return interaction.describe() + turn


def past_the_last_turn(scenario: Scenario, turn: int, chosen_by: str) -> str:
    replies = turn - 1
    return (
        f"mockllama: scenario {scenario.name!r} (chosen by {chosen_by}) records {scenario.turns} "
        f"turn{'s' if scenario.turns != 1 else ''}, but this request carries {replies} model "
        f"repl{'ies' if replies != 1 else 'y'} (function calls or assistant messages), so it asks for turn "
        f"{turn}. mockllama never replays an earlier turn for a later one. Stop the conversation after "
        f'turn {scenario.turns}, or record a longer conversation (a catalogue entry with "turns").'
    )
