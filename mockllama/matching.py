"""Choosing the recorded interaction for an incoming request.

Order, first that applies:
1. a body that is not JSON is answered by a recording with the very same bytes, else a 400;
2. explicit selection: the ``X-Mockllama-Scenario`` header, or a ``model`` that names a scenario;
3. a JSON-aware match of the body, ignoring the fields llama-server ignores;
4. a 400 for a field of the wrong type;
5. the ``--fallback`` scenario;
6. a 404 that names the nearest scenario and the fields that differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .bounded_cache import ByteBoundedMemo
from .cassettes import Interaction, Scenario
from .errors import RequestError
from .validation import stream_type_error, type_error

# Larger bodies are matched afresh each time, so the memory of past selections stays bounded.
REMEMBERED_BODY_BYTES = 64 * 1024

# llama-server ignores these, so a client may send anything there.
IGNORED_FIELDS = frozenset({"model", "stream_options", "user", "metadata"})


@dataclass(frozen=True)
class Selection:
    interaction: Interaction
    how: str  # "header", "model", "match", "recorded-bytes", "fallback" or "route"


def _canonical(value):
    """Numbers compare by value (0 == 0.0) and key order never matters."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def normalise(body) -> object:
    if not isinstance(body, dict):
        return _canonical(body)
    kept = {key: value for key, value in body.items() if key not in IGNORED_FIELDS}
    kept["stream"] = body.get("stream") is True
    return _canonical(kept)


def match_key(body) -> str:
    return json.dumps(normalise(body), sort_keys=True, ensure_ascii=False)


def differing_fields(sent: dict, recorded: dict) -> list[str]:
    sent, recorded = normalise(sent), normalise(recorded)
    return sorted(key for key in sent.keys() | recorded.keys() if sent.get(key, ...) != recorded.get(key, ...))


def _short(value) -> str:
    text = "absent" if value is ... else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 48 else text[:45] + "..."


def _key_bytes(args: tuple) -> int:
    method, path, raw, scenario_name = args
    return len(method) + len(path) + len(raw) + len(scenario_name or "")


class Matcher:
    def __init__(self, scenarios: dict[str, Scenario], fallback: str | None = None):
        if fallback is not None and fallback not in scenarios:
            known = ", ".join(sorted(scenarios))
            raise ValueError(f"the fallback scenario {fallback!r} is not among the loaded scenarios: {known}")
        self.scenarios = scenarios
        self.fallback = fallback
        self._by_key: dict[tuple[str, str, str], Interaction] = {}
        self._by_bytes: dict[tuple[str, str, bytes], Interaction] = {}
        self._by_route: dict[tuple[str, str], list[Interaction]] = {}
        for scenario in scenarios.values():
            self._index(scenario, first_wins=True)
        # Clients repeat the same request bodies, and a body always selects the same recording:
        # remember recent answers (the profile showed JSON work on every request), 16 MiB of keys at most.
        self._remembered = ByteBoundedMemo(self._select, _key_bytes)

    def _index(self, scenario: Scenario, first_wins: bool) -> None:
        for interaction in scenario.interactions:
            route = (interaction.method, interaction.path)
            self._by_route.setdefault(route, []).append(interaction)
            keys = []
            if interaction.request_raw is not None:
                keys.append((self._by_bytes, (*route, interaction.request_raw)))
            if interaction.request_json is not None:
                keys.append((self._by_key, (*route, match_key(interaction.request_json))))
            for index, key in keys:
                if first_wins:
                    index.setdefault(key, interaction)
                else:
                    index[key] = interaction

    def add(self, scenario: Scenario) -> None:
        """Serve a new recording from now on, in place of any scenario of the same name; where
        it records the same request as another scenario, the new recording wins."""
        old = self.scenarios.get(scenario.name)
        if old is not None:
            gone = {id(interaction) for interaction in old.interactions}
            for index in (self._by_key, self._by_bytes):
                for key in [k for k, i in index.items() if id(i) in gone]:
                    del index[key]
            for route, interactions in self._by_route.items():
                interactions[:] = [i for i in interactions if id(i) not in gone]
        self.scenarios[scenario.name] = scenario
        self._index(scenario, first_wins=False)
        self._remembered.cache_clear()

    def select(self, method: str, path: str, raw: bytes, scenario_name: str | None = None) -> Selection:
        if len(raw) > REMEMBERED_BODY_BYTES:
            return self._select(method, path, raw, scenario_name)
        return self._remembered(method, path, raw, scenario_name)

    def _select(self, method: str, path: str, raw: bytes, scenario_name: str | None) -> Selection:
        if method == "GET":
            return self._select_get(path, scenario_name)
        try:
            body = json.loads(raw)
        except ValueError as err:
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
        recorded = self._by_key.get((method, path, match_key(body)))
        if recorded is not None:
            return Selection(recorded, "match")
        problem = type_error(path, body)
        if problem:
            raise RequestError(400, problem)
        stream = body.get("stream") is True
        if self.fallback is not None:
            return Selection(self._in_scenario(self.fallback, method, path, stream, "--fallback"), "fallback")
        raise RequestError(404, self._no_match_message(method, path, body, stream))

    def _select_get(self, path: str, scenario_name: str | None) -> Selection:
        candidates = self._by_route.get(("GET", path), [])
        for interaction in candidates:
            if interaction.scenario == scenario_name:
                return Selection(interaction, "header")
        if not candidates:
            raise RequestError(404, f"mockllama: no cassette records GET {path}.")
        return Selection(candidates[0], "route")

    def _explicit(self, method, path, body, scenario_name) -> Selection | None:
        stream = isinstance(body, dict) and body.get("stream") is True
        if scenario_name is not None:
            if scenario_name not in self.scenarios:
                known = ", ".join(sorted(self.scenarios))
                raise RequestError(
                    404, f"mockllama: no scenario named {scenario_name!r} (from X-Mockllama-Scenario). Known: {known}."
                )
            return Selection(self._in_scenario(scenario_name, method, path, stream, "X-Mockllama-Scenario"), "header")
        model = body.get("model") if isinstance(body, dict) else None
        if isinstance(model, str) and model in self.scenarios:
            return Selection(self._in_scenario(model, method, path, stream, "model"), "model")
        return None

    def _in_scenario(self, name: str, method: str, path: str, stream: bool, chosen_by: str) -> Interaction:
        interaction = self.scenarios[name].find(method, path, stream)
        if interaction is None:
            recorded = "; ".join(sorted({i.describe() for i in self.scenarios[name].interactions}))
            raise RequestError(
                404,
                f"mockllama: scenario {name!r} (chosen by {chosen_by}) has no recorded "
                f"{method} {path} with stream={str(stream).lower()}. It records: {recorded}.",
            )
        return interaction

    def _no_match_message(self, method: str, path: str, body: dict, stream: bool) -> str:
        candidates = [
            i
            for i in self._by_route.get((method, path), [])
            if i.stream == stream and isinstance(i.request_json, dict) and i.status < 400
        ]
        how_to = (
            "Select a scenario whatever the prompt with the header 'X-Mockllama-Scenario: NAME' or with "
            "\"model\": \"NAME\" (list them with 'mockllama scenarios'), start the server with "
            "--fallback NAME, or record this request from a live llama-server and serve it with --cassettes DIR."
        )
        if not candidates:
            return (
                f"mockllama: no recording matches {method} {path} (stream={str(stream).lower()}); "
                f"no scenario records that endpoint with that stream flag. {how_to}"
            )
        nearest = min(candidates, key=lambda i: len(differing_fields(body, i.request_json)))
        sent, recorded = normalise(body), normalise(nearest.request_json)
        differences = ", ".join(
            f"{key} (sent {_short(sent.get(key, ...))}, recorded {_short(recorded.get(key, ...))})"
            for key in differing_fields(body, nearest.request_json)
        )
        return (
            f"mockllama: no recording matches this {method} {path} request "
            f"(stream={str(stream).lower()}; model, stream_options, user and metadata are ignored). "
            f"Nearest scenario: {nearest.scenario!r}, which differs in: {differences}. {how_to}"
        )
