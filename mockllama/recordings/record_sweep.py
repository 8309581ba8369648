"""Recording a sweep (``recordings.sweeps``): a catalogue scenario at every limit up to where it finishes.

Where it finishes is asked of the live server, never written in the catalogue: the scenario's
first request goes out as written, with its own generous limit, and the reply's
``usage.output_tokens`` is the length. Each position is then recorded as any scenario is (its
Responses request and chat twin, streamed and not), into a file of its own in a working folder
beside the cassette. An interrupted sweep therefore goes on where it stopped: what is on disk is
not recorded again. Once every position is there they are written together as one cassette,
``NAME.sweep.yaml``, and the folder goes.

In the cassette the interactions go kind by kind (every position's non-streamed reply, then every
position's chat twin, ...): a position's reply is the one before it and a token more, so like
lies beside like, and the compressed forms (a wheel, a git pack) store what repeats about once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from mockllama.recordings.cassettes import CassetteError, load_cassette, sweep_positions
from mockllama.recordings.catalogue import CatalogueScenario
from mockllama.recordings.record import (
    RecordError,
    _send,
    _session,
    _YamlInto,
    partial_file,
    record_into,
)
from mockllama.recordings.safe_yaml import load_yaml
from mockllama.recordings.sweeps import SWEEP_SUFFIXES, position_name
from mockllama.wire.sizes import DEFAULT_MAX_REPLY_BYTES

POSITION_SUFFIX = ".position"  # no cassette's suffix: a working folder left behind is never loaded
PLAN_FILE = "sweep.json"


@dataclass(frozen=True)
class SweepOutcome:
    scenario: str
    summary: str  # e.g. "positions 1-37: responses=completed; twin length x36, tool_calls x1"
    positions: int
    recorded: int  # positions recorded by this run; the rest were on disk from an earlier one
    failed: bool = False
    note: str | None = None


# Told of each position as it is done: (positions done, positions in all, what it said, whether this
# run recorded it: False for one on disk from an earlier run).
Progress = Callable[[int, int, str, bool], None]


def sweep_file(out_dir: Path, name: str) -> Path:
    return out_dir / f"{name}{SWEEP_SUFFIXES[0]}"


def working_folder(out_dir: Path, name: str) -> Path:
    return out_dir / f".{name}.sweep-positions"


def _output_tokens(body: bytes) -> int | None:
    try:
        usage = json.loads(body).get("usage")
        tokens = usage.get("output_tokens", usage.get("completion_tokens"))
    except (ValueError, AttributeError):
        return None
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 1 else None


async def finished_length(
    entry: CatalogueScenario,
    url: str,
    timeout: float,
    headers: dict,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    auth: aiohttp.BasicAuth | None = None,
) -> int:
    """How many tokens the scenario's reply takes when nothing cuts it: its first request sent as
    written, and the reply's ``usage.output_tokens`` read."""
    first = entry.planned()[0]
    async with _session(timeout, headers, max_reply_bytes, auth) as session:
        status, body = await _send(session, url, first)
    if status != 200:
        raise RecordError(
            f"sweep {entry.name!r}: its request as written ({first.describe()}) answered HTTP {status}, "
            "so there is no length to sweep up to"
        )
    tokens = _output_tokens(body)
    if tokens is None:
        raise RecordError(
            f"sweep {entry.name!r}: the reply to {first.describe()} says no usage.output_tokens of at least 1, "
            "so there is no length to sweep up to"
        )
    return tokens


def _request_sha256(entry: CatalogueScenario) -> str:
    text = json.dumps([request.body_text() for request in entry.planned()])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plan(folder: Path, entry: CatalogueScenario, finished_at: int) -> None:
    """The working folder for this request and length, kept from an earlier run when it was for
    the same request and the server still finishes at the same length; else made afresh."""
    plan = {"request_sha256": _request_sha256(entry), "finished_at": finished_at}
    try:
        if json.loads((folder / PLAN_FILE).read_text(encoding="utf-8")) == plan:
            return
    except (OSError, ValueError):
        pass
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / PLAN_FILE).write_text(json.dumps(plan) + "\n", encoding="utf-8")


def _twin_reason(summary: str) -> str:
    """The chat twin's finish_reason from a position's summary (``responses=completed twin=length``)."""
    for word in summary.split():
        if word.startswith("twin="):
            return word[len("twin=") :]
    return summary


def _summary(positions: range, reasons: list[str]) -> str:
    counts: dict[str, int] = {}
    for reason in reasons:
        counts[reason] = counts.get(reason, 0) + 1
    said = ", ".join(f"{reason} x{count}" for reason, count in counts.items())
    return f"positions {positions.start}-{positions.stop - 1}: {said}"


def _merge(folder: Path, positions: range, final: Path) -> None:
    """Every position's interactions as one cassette, kind by kind (see the module's docstring)."""
    recorded = [load_yaml((folder / f"{limit}{POSITION_SUFFIX}").read_text(encoding="utf-8")) for limit in positions]
    kinds = max(len(cassette["interactions"]) for cassette in recorded)
    interactions = [
        cassette["interactions"][kind]
        for kind in range(kinds)
        for cassette in recorded
        if kind < len(cassette["interactions"])
    ]
    with partial_file(final) as partial:
        with open(partial, "w", encoding="utf-8") as handle:
            _YamlInto(handle).serialize({"interactions": interactions, "version": 1})
        try:
            served = sweep_positions(_load(partial, final))
        except CassetteError as err:
            raise RecordError(f"the sweep written to {final} cannot be served: {err.reason}") from None
        if [scenario.limit for scenario in served] != list(positions):
            raise RecordError(
                f"the sweep written to {final} does not hold every position {positions.start}-{positions.stop - 1}"
            )
        os.replace(partial, final)


def _load(partial: Path, final: Path):
    """The merged cassette read back as the server will read it, under its final name."""
    scenario = load_cassette(partial)
    scenario.source = final
    return scenario


async def record_sweep(
    entry: CatalogueScenario,
    url: str,
    out_dir: Path,
    timeout: float,
    headers: dict,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    auth: aiohttp.BasicAuth | None = None,
    progress: Progress = lambda done, total, said, recorded: None,
) -> SweepOutcome:
    """Record ``entry`` at every position into ``out_dir/NAME.sweep.yaml`` (see the module's docstring)."""
    assert entry.sweep is not None, "record_sweep records a scenario with a sweep"
    finished_at = await finished_length(entry, url, timeout, headers, max_reply_bytes, auth)
    positions = entry.sweep.positions(finished_at)
    folder = working_folder(out_dir, entry.name)
    _plan(folder, entry, finished_at)
    reasons, recorded = [], 0
    for done, limit in enumerate(positions, start=1):
        path = folder / f"{limit}{POSITION_SUFFIX}"
        summary_path = path.with_suffix(".summary")
        on_disk = path.exists() and summary_path.exists()
        if on_disk:
            said = summary_path.read_text(encoding="utf-8")
        else:
            outcome = await record_into(path, entry.at_limit(limit), url, timeout, headers, max_reply_bytes, auth)
            if outcome.failed:
                return SweepOutcome(
                    entry.name,
                    f"FAILED at {position_name(entry.name, limit)}: {outcome.summary}",
                    len(positions),
                    recorded,
                    failed=True,
                )
            said = outcome.summary
            summary_path.write_text(said, encoding="utf-8")
            recorded += 1
        reasons.append(_twin_reason(said))
        progress(done, len(positions), f"{position_name(entry.name, limit)}: {said}", not on_disk)
    _merge(folder, positions, sweep_file(out_dir, entry.name))
    shutil.rmtree(folder, ignore_errors=True)
    return SweepOutcome(entry.name, _summary(positions, reasons), len(positions), recorded, note=entry.note)
