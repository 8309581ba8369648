"""Replaying at the recording's own speed, for demos: ``--pace instant|recorded|FACTOR``.

llama-server puts ``timings`` in its replies: ``prompt_ms`` until the first token, then
``predicted_ms`` for the rest, ``predicted_per_token_ms`` apart (it divides ``predicted_ms`` by
``predicted_n - 1``: the first token comes with the prompt). A paced stream sends its first event
after ``prompt_ms`` and each delta after the first ``predicted_per_token_ms`` later; where some
tokens produced no delta of their own (tool-call framing), each delta carries their share. So the
whole stream takes the recorded ``prompt_ms + predicted_ms``, and a non-streamed reply waits that
total. ``FACTOR`` divides every wait: ``2`` is twice as fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockllama.recordings.cassettes import Interaction, Scenario
from mockllama.server.option_fields import option
from mockllama.server.outgoing import Outgoing
from mockllama.server.steps.registry import register
from mockllama.server.steps.step import Answer, Step
from mockllama.wire.sse import Event

DELTA_TYPES = ("response.output_text.delta", "response.function_call_arguments.delta", "content_block_delta")


# The slowest pace: a thousand times slower than recorded. Slower, a stream's waits outlast any test
# (1e-300 made them longer than the universe's age); faster, or infinite, is as good as instant.
MIN_PACE = 0.001


def parse_pace(text: str) -> float | None:
    """``instant`` -> None (no waiting), ``recorded`` -> 1.0, ``2`` -> 2.0."""
    if text == "instant":
        return None
    if text == "recorded":
        return 1.0
    try:
        factor = float(text)
    except ValueError:
        factor = float("nan")
    if not MIN_PACE <= factor < float("inf"):
        raise ValueError(f"pace must be instant, recorded or a number from {MIN_PACE:g} up, not {text!r}")
    return factor


def _own_timings(interaction: Interaction) -> dict | None:
    payloads = [e.json() for e in interaction.events] if interaction.is_event_stream else [interaction.body_json]
    for payload in reversed(payloads):
        if isinstance(payload, dict) and isinstance(payload.get("timings"), dict):
            return payload["timings"]
    return None


def recorded_timings(scenario: Scenario, interaction: Interaction) -> dict | None:
    """The interaction's own ``timings``, else its chat twin's: the same generation at temperature 0."""
    timings = _own_timings(interaction)
    if timings is None and interaction.path != "/v1/chat/completions":
        twin = scenario.chat_twin(interaction)
        timings = _own_timings(twin) if twin is not None else None
    return timings


def is_delta(event: Event) -> bool:
    payload = event.json()
    if not isinstance(payload, dict):
        return False
    if payload.get("type") in DELTA_TYPES:
        return True
    return any(
        (choice.get("delta") or {}).get("content") or (choice.get("delta") or {}).get("tool_calls")
        for choice in payload.get("choices") or []
    )


def stream_delays(events: tuple[Event, ...], timings: dict, factor: float) -> list[float]:
    """Seconds to wait before each event."""
    flags = [is_delta(event) for event in events]
    later_deltas = max(sum(flags) - 1, 0)
    per_delta_ms = timings.get("predicted_ms", 0.0) / later_deltas if later_deltas else 0.0
    delays, seen_delta = [], False
    for index, delta in enumerate(flags):
        wait_ms = timings.get("prompt_ms", 0.0) if index == 0 else per_delta_ms if delta and seen_delta else 0.0
        seen_delta = seen_delta or delta
        delays.append(wait_ms / 1000 / factor)
    return delays


def body_delay(timings: dict, factor: float) -> float:
    return (timings.get("prompt_ms", 0.0) + timings.get("predicted_ms", 0.0)) / 1000 / factor


def recorded_delays(
    scenario: Scenario, interaction: Interaction, events: tuple[Event, ...] | None, factor: float
) -> list[float] | None:
    """Seconds to wait before each block of the reply: one for a plain body, one per event of a
    stream; None (send at once) when the recording has no timings."""
    timings = recorded_timings(scenario, interaction)
    if timings is None:
        return None
    return [body_delay(timings, factor)] if events is None else stream_delays(events, timings, factor)


@dataclass(frozen=True)
class PacingOptions:
    pace: float | None = field(  # None: instant; else divide the recorded timings by this
        default=None,
        metadata=option(
            "--pace",
            "instant: no waiting. recorded: streams keep the recording's own timing (prompt_ms, then "
            "predicted_per_token_ms per delta). A number (0.001 or more) scales that: 2 is twice as fast.",
            metavar="instant|recorded|FACTOR",
            parse=parse_pace,
            shown_default="instant",
        ),
    )


@register
class PacingStep(Step):
    """``--pace``: each block at its recorded time, divided by ``factor`` (None: instant, so never).
    Not a faulted reply's: its fault says when it goes out. Last: it sets each block's wait."""

    place = 30
    options = PacingOptions

    def __init__(self, factor: float | None):
        self.factor = factor

    @classmethod
    def of(cls, settings, faults) -> PacingStep:
        return cls(settings.pace)

    def applies(self, answer: Answer) -> bool:
        return self.factor is not None and answer.fault is None

    def shape(self, answer: Answer, outgoing: Outgoing) -> None:
        assert self.factor is not None  # applies() said so
        delays = recorded_delays(answer.scenario, answer.interaction, answer.reply.events, self.factor)
        if delays is None:
            return
        if outgoing.stream:
            outgoing.waits = delays  # the head at once, as llama-server sends it; each event at its time
        else:
            outgoing.before += delays[0]  # a plain body: all of it once generated
