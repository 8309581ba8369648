"""The bundled sweeps held against a fresh llama-server b11434, stock and patched: a sample of each
sweep's positions sent again, and every reply compared with the bundled one, everything but ids,
times, timings and the prompt cache's counts (which depend on what the server answered before)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from mockllama.recordings.cassettes import RECORDING_SETS, Scenario, load_scenarios
from mockllama.wire import sse

pytestmark = pytest.mark.live

STOCK = load_scenarios([RECORDING_SETS["stock"]()])
PATCHED = load_scenarios([RECORDING_SETS["patched"]()])
# What two runs of the same request may differ in: ids, times, timings, and how much of the
# prompt the server found in its cache.
VOLATILE = {
    "id",
    "call_id",
    "item_id",
    "created",
    "created_at",
    "completed_at",
    "timings",
    "cached_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "input_tokens_details",
    "prompt_tokens_details",
}


def steady(value):
    """``value`` without what may differ between two runs of the same request (VOLATILE). Beside
    ``cache_read_input_tokens`` (/v1/messages' usage), ``input_tokens`` counts only the prompt
    tokens the cache did not hold, so it goes too."""
    if isinstance(value, dict):
        cached = "cache_read_input_tokens" in value
        return {
            key: steady(item)
            for key, item in value.items()
            if key not in VOLATILE and not (cached and key == "input_tokens")
        }
    if isinstance(value, list):
        return [steady(item) for item in value]
    return value


def steady_body(body: bytes):
    if sse.is_event_stream(body):
        return [
            (event.name, steady(event.json()) if event.data != "[DONE]" else "[DONE]")
            for event in sse.parse_stream(body)
        ]
    return steady(json.loads(body))


def sample(sweep: list[Scenario]) -> list[Scenario]:
    """The first and last positions, the one before the last, and one in the middle."""
    picked = {0, len(sweep) // 2, len(sweep) - 2, len(sweep) - 1}
    return [sweep[index] for index in sorted(index for index in picked if index >= 0)]


def sweeps(scenarios: dict, setup_default: bool) -> dict[str, list[Scenario]]:
    found: dict[str, list[Scenario]] = {}
    for scenario in scenarios.values():
        if scenario.sweep is not None and (scenario.setup == "default") == setup_default:
            found.setdefault(scenario.sweep, []).append(scenario)
    return {name: sorted(positions, key=lambda s: s.limit) for name, positions in sorted(found.items())}


def send(url: str, interaction) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url + interaction.path, data=interaction.request_raw, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def compare(url: str, scenarios: dict, setup_default: bool) -> list[str]:
    compared = []
    for positions in sweeps(scenarios, setup_default).values():
        # as the recorder does, the request first goes out whole (its length is asked): the prompt is
        # then in the server's cache, and a long prompt evaluated cold can give another first token
        # (the two calls: "\n" for '{"' at position 1)
        send(url, next(i for i in positions[-1].interactions if i.method == "POST" and not i.stream))
        for position in sample(positions):
            for interaction in position.interactions:
                status, body = send(url, interaction)
                assert status == interaction.status, (position.name, interaction.describe())
                assert steady_body(body) == steady_body(interaction.body), (position.name, interaction.describe())
            compared.append(position.name)
    return compared


@pytest.mark.parametrize("recordings", ["stock", "patched"])
def test_a_sample_of_every_sweep_is_what_a_fresh_server_sends(
    recordings,
    start_llama_server,
    start_patched_llama_server,
    start_forced_thinking_server,
    start_patched_forced_thinking_server,
):
    scenarios = STOCK if recordings == "stock" else PATCHED
    default, thinking = (
        (start_llama_server, start_forced_thinking_server)
        if recordings == "stock"
        else (start_patched_llama_server, start_patched_forced_thinking_server)
    )
    server = default()
    compared = compare(server.url, scenarios, setup_default=True)
    server.stop()
    server = thinking()
    compared += compare(server.url, scenarios, setup_default=False)
    server.stop()
    names = {name.split("@")[0] for name in compared}
    assert names == {"tool-call", "tool-two-calls", "text-reply", "messages-tool-call", "thinking"}, compared
