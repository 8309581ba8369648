"""Writing a flight's recording into the record directory as ``record`` writes one: merged into
``NAME.yaml``, scrubbed, checked by loading it as ``serve`` will, and only then renamed into place,
with ``provenance.json`` updated. Nothing is written that would not load."""

from __future__ import annotations

import dataclasses
import errno
import itertools
import json
import logging
from pathlib import Path

from mockllama.recordings.cassettes import (
    CassetteError,
    Interaction,
    Scenario,
    load_cassette,
    read_cassette,  # the safe reading every load uses
)
from mockllama.recordings.chat_twin import turn_of
from mockllama.recordings.record import PROVENANCE_FILE, Outcome, ServerInfo, save_cassette, write_provenance
from mockllama.upstream.flight import Exchange, Flight
from mockllama.wire.errors import RequestError
from mockllama.wire.routes import RESPONSES_PATH
from mockllama.wire.terminal import printable

log = logging.getLogger("mockllama")


def _request_key(method: str, path: str, body) -> tuple[str, str, bool, int]:
    """What a recording in a scenario answers: the route, the stream flag, and the conversation's
    turn, as ``Scenario.find`` looks it up. A recording with the same key is replaced; one with
    another turn is kept, so an agent loop recorded under one name keeps every turn, as vcrpy's
    ``new_episodes`` keeps every episode."""
    if isinstance(body, bytes):
        try:
            body = json.loads(body)
        except ValueError:
            body = None
    stream = isinstance(body, dict) and body.get("stream") is True
    return method.upper(), path, stream, turn_of(path, body)


def _vcr_key(request) -> tuple[str, str, bool, int]:
    return _request_key(request.method, request.parsed_uri.path, request.body)


def _responses_status(interaction: Interaction) -> str | None:
    if interaction.is_event_stream:
        last: dict = next((e.json() for e in reversed(interaction.events) if isinstance(e.json(), dict)), {})
        return (last.get("response") or {}).get("status")
    body = interaction.body_json
    return body.get("status") if isinstance(body, dict) else None


def summary(scenario: Scenario, interaction: Interaction) -> str:
    """What provenance.json says of a recording, in ``record``'s words."""
    if interaction.path == RESPONSES_PATH and interaction.status == 200:
        return f"responses={_responses_status(interaction)} twin={scenario.twin_finish_reason(interaction)}"
    return f"{interaction.path}:{interaction.status}"


def write_recording(
    flight: Flight, exchanges: list[Exchange], info: ServerInfo, directory: Path, upstream_url: str
) -> tuple[Scenario, int]:
    """Merge into NAME.yaml (an interaction with the same method, path, stream flag and turn is
    replaced) and write it as ``record`` does: the scenario to serve from now on, and where the
    flight's own request is in it. Run in a thread, one at a time (``Recorder._record``): it touches
    nothing but files and what it is given.

    What is written is first read back from its temporary file by the loader ``serve`` uses;
    only a cassette that loads is renamed into place, so no upstream reply can leave the
    record directory unloadable, nor spoil a good recording it would have joined."""
    path = directory / f"{flight.name}.yaml"
    problem = unrecordable(exchanges)
    if problem:
        raise _not_recorded(upstream_url, flight, problem)
    kept = []
    if path.is_file():
        try:
            requests, responses = read_cassette(path)
        except CassetteError as err:
            raise _not_written(
                upstream_url, flight, path, f"the existing {path.name} cannot be read ({err.reason})"
            ) from None
        replaced = {_vcr_key(exchange.request) for exchange in exchanges}
        kept = [(q, r) for q, r in zip(requests, responses) if _vcr_key(q) not in replaced]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # Each reply is read back from its spool as save_cassette takes it, and kept nowhere
        # else: once written, its bytes are gone before the check loads the cassette back.
        pairs = itertools.chain(kept, (exchange.pair() for exchange in exchanges))
        scenario = save_cassette(path, pairs, check=lambda written: _loaded_as(written, flight.name, path))
    except CassetteError as err:
        raise _not_recorded(upstream_url, flight, err.reason) from None
    except OSError as err:  # this machine's file system, never the upstream's doing
        raise _not_written(upstream_url, flight, path, os_error(err)) from None
    interaction = scenario.interactions[len(kept)]  # the flight's own request; its twin follows
    log.info("mockllama: recorded %s into %s", interaction.describe(), path)
    try:
        write_provenance(
            directory,
            upstream_url,
            info,
            [Outcome(scenario.name, summary(scenario, interaction))],
            None,
            None,
            recorded_by="mockllama serve --upstream, on a miss",
        )
    except OSError as err:  # the recording is written and served: say so, and what is missing
        log.warning(
            "mockllama: recorded %s into %s, but could not update %s: %s. The recording is kept "
            "and served; only its provenance is missing.",
            interaction.describe(),
            path,
            directory / PROVENANCE_FILE,
            os_error(err),
        )
    return scenario, len(kept)


def _not_written(upstream_url: str, flight: Flight, path: Path, reason: str) -> RequestError:
    """A recording this machine could not write: a 500, as nginx answers its own failures; the
    upstream answered, so a 502 would send the user to look in the wrong place."""
    sent = flight.sent
    return RequestError(
        500,
        f"mockllama: the upstream llama-server at {upstream_url} answered "
        f"{sent.method} {sent.path} (stream={str(sent.stream).lower()}), but mockllama could not "
        f"write its recording to {printable(str(path))}: {printable(reason)}. The fault is on this "
        f"machine, not the upstream's: check that {printable(str(path.parent))} is a writable "
        "directory with space left. Nothing was recorded; the record directory is as it was.",
    )


def _not_recorded(upstream_url: str, flight: Flight, reason: str) -> RequestError:
    sent = flight.sent
    return RequestError(
        502,
        f"mockllama: the reply of the upstream llama-server at {upstream_url} "
        f"to {sent.method} {sent.path} (stream={str(sent.stream).lower()}) was not recorded, "
        f"because a recording of it could not be served: {printable(reason)}. Nothing was "
        "written; the record directory is as it was.",
    )


def os_error(err: OSError) -> str:
    """``EACCES (Permission denied) on /path``: the errno by name, as a user looks it up."""
    name = errno.errorcode.get(err.errno, f"errno {err.errno}") if err.errno else type(err).__name__
    where = f" on {err.filename}" if err.filename else ""
    where += f" -> {err.filename2}" if err.filename2 else ""  # a rename names both
    return f"{name} ({err.strerror or err}){where}"


def unrecordable(exchanges: list[Exchange]) -> str | None:
    """Why these replies must not be recorded, beyond what loading the cassette checks."""
    for exchange in exchanges:
        for name, values in exchange.headers.items():
            encodings = {value.strip().lower() for value in values} - {"", "identity"}
            if name.lower() == "content-encoding" and encodings:
                return (
                    f"it came with Content-Encoding {', '.join(sorted(encodings))} although mockllama asked "
                    "for identity, and recordings are kept as plain text"
                )
    return None


def _loaded_as(written: Path, name: str, final: Path) -> Scenario:
    """The temporary cassette ``written``, loaded as ``serve`` will load it once it is ``final``."""
    loaded = load_cassette(written)
    return Scenario(name, final, [dataclasses.replace(each, scenario=name) for each in loaded.interactions])
