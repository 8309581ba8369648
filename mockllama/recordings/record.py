"""Capture a catalogue of scenarios from a live llama-server into vcrpy cassettes.

vcrpy itself records: each scenario's requests go through an aiohttp client inside
``use_cassette``. Secrets are scrubbed before vcrpy writes anything, and each cassette is written
to a temporary file that is renamed into place only when the scenario is complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from mockllama import __version__
from mockllama.recordings.catalogue import CatalogueError, CatalogueScenario, PlannedRequest, responses_requests
from mockllama.wire.routes import CHAT_PATH, RESPONSES_PATH
from mockllama.wire.scrub import (
    is_secret_header,
    scrub_command,
    scrub_header_value,
    scrub_text,
    split_credentials,
)
from mockllama.wire.sizes import DEFAULT_MAX_REPLY_BYTES

PROVENANCE_FILE = "provenance.json"


class RecordError(Exception):
    """The server cannot be recorded from; the message says why and what to do."""


@dataclass(frozen=True)
class ServerInfo:
    props: dict
    models: dict

    @property
    def model(self) -> str | None:
        data = self.models.get("data") or []
        return data[0].get("id") if data else self.props.get("model_alias")

    @property
    def chat_template_sha256(self) -> str:
        return hashlib.sha256((self.props.get("chat_template") or "").encode("utf-8")).hexdigest()


def serves_template(info: ServerInfo, file_sha256: str) -> bool:
    """Whether the server runs the template file with this sha256. /props gives the template
    without the file's final newline (seen on b11434), so both forms are hashed."""
    template = info.props.get("chat_template") or ""
    return file_sha256 in {hashlib.sha256(text.encode("utf-8")).hexdigest() for text in (template, template + "\n")}


def require_setup(info: ServerInfo, setup: dict | None) -> None:
    """A catalogue made for one chat template is recorded from a server that runs that template."""
    if setup is None or serves_template(info, setup["chat_template_sha256"]):
        return
    raise RecordError(
        f"this catalogue is for the set-up {setup['name']!r}, whose chat template {setup['chat_template_file']} "
        f"has sha256 {setup['chat_template_sha256']}, but the server's chat template has sha256 "
        f"{info.chat_template_sha256}. Start the server with that template, e.g. "
        f"scripts/llama-server.sh run --setup {setup['name']} PORT"
    )


@dataclass(frozen=True)
class Outcome:
    scenario: str
    summary: str  # e.g. "responses=completed twin=length"
    failed: bool = False  # nothing was written for it; any old cassette is kept
    note: str | None = None  # the catalogue's note on the scenario


class ReplyTooLarge(RecordError):
    pass


def scrub_request(request):
    """Every header named like a credential goes, whatever its exact name, and every credential in
    another header's value; the URI keeps no user:password."""
    for name in list(request.headers):
        if is_secret_header(name):
            del request.headers[name]
        else:
            request.headers[name] = scrub_header_value(name, str(request.headers[name]))
    request.uri = split_credentials(request.uri)[0]
    return request


def scrub_response(response: dict) -> dict:
    headers = response.get("headers") or {}
    for name in list(headers):
        if is_secret_header(name):
            del headers[name]
        else:
            values = headers[name]
            headers[name] = (
                [scrub_header_value(name, str(value)) for value in values]
                if isinstance(values, list)
                else scrub_header_value(name, str(values))
            )
    return response


@contextlib.contextmanager
def partial_file(path: Path):
    """A temporary path for writing ``path``, renamed into place by the caller. It lies in a fresh
    directory of its own (``mkdtemp``: an unpredictable name, private to this user), so nothing
    planted beside ``path`` (a link at a guessable name) can be written through; the rename
    replaces a link at ``path`` itself, never what it points to. Its suffix is no cassette's, so
    one left behind by a killed process is never loaded. The directory goes once done."""
    private = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent))
    try:
        yield private / f"{path.name}.partial"
    finally:
        shutil.rmtree(private, ignore_errors=True)


class _YamlInto:
    """vcrpy's serializer shape (``serialize(data)``), writing the YAML into an open file as libyaml
    emits it: the document is never held whole in memory, as text or as the encoded bytes. The
    safe dumper, which can write nothing the safe loader would refuse; for plain data its output is
    vcrpy's own (``yamlserializer``, PyYAML's CDumper) byte for byte."""

    def __init__(self, handle):
        self.handle = handle

    def serialize(self, data) -> None:
        yaml.dump(data, self.handle, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper))


def save_cassette(path: Path, pairs, check=lambda written: None):
    """Write ``(vcr Request, response dict)`` pairs as one cassette, the way ``record`` writes them:
    the same scrubbing, vcrpy's own serialization (``vcr.serialize``) and YAML form, and a temporary
    file renamed into place, so a reader sees the old cassette or the whole new one, never half of one.

    ``pairs`` is any iterable, read once; nothing of it is kept once the YAML is written, so that a
    large reply body is not still in memory while ``check`` loads the cassette back. ``check(written)``
    reads the temporary file before the rename and raises if it must not replace ``path``; what it
    returns is returned."""
    cassette: dict[str, list] = {"requests": [], "responses": []}
    for request, response in pairs:
        cassette["requests"].append(scrub_request(copy.deepcopy(request)))
        cassette["responses"].append(scrub_response(copy.deepcopy(response)))
    # vcr imported here and in _vcr: importing it loads its patches for every HTTP library, 0.4 s
    # of every `mockllama serve` start, which imports this module for --record-on-miss.
    from vcr.serialize import serialize

    with partial_file(path) as partial:
        with open(partial, "w", encoding="utf-8") as handle:
            serialize(cassette, _YamlInto(handle))
        del cassette  # the bodies, now as text: gone before the check reads them back
        checked = check(partial)
        os.replace(partial, path)
    return checked


class _CappedResponse(aiohttp.ClientResponse):
    """vcrpy reads each reply whole to record it; this read stops at ``max_bytes`` instead of
    holding an endless stream in memory."""

    max_bytes = DEFAULT_MAX_REPLY_BYTES

    async def read(self) -> bytes:
        if self._body is None:
            body = bytearray()
            async for chunk in self.content.iter_any():
                body += chunk
                if len(body) > self.max_bytes:
                    self.close()
                    raise ReplyTooLarge(
                        f"{self.method} {self.url.path} answered more than {self.max_bytes} "
                        "bytes; raise --max-reply-bytes if that is really wanted"
                    )
            self._body = bytes(body)
        return await super().read()


def _session(
    timeout: float, headers: dict, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES, auth: aiohttp.BasicAuth | None = None
) -> aiohttp.ClientSession:
    # llama-server answers "Connection: close"; reusing a connection fails on the next request.
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(force_close=True),
        timeout=aiohttp.ClientTimeout(total=timeout, sock_connect=10),
        headers=headers,
        auth=auth,
        response_class=type("CappedResponse", (_CappedResponse,), {"max_bytes": max_reply_bytes}),
    )


def _refuse_redirect(response: aiohttp.ClientResponse, what: str) -> None:
    """A redirect is reported, never followed: following it would send the recorder's requests,
    and maybe credentials, to another server and record that server's replies."""
    if 300 <= response.status < 400:
        target = response.headers.get("Location", "(no Location)")
        raise RecordError(
            f"{what} answered HTTP {response.status}, a redirect to {scrub_text(target)}; mockllama "
            "does not follow redirects: give --server the address that answers itself"
        )


async def _get_json(session: aiohttp.ClientSession, url: str, path: str) -> dict:
    async with session.get(url + path, allow_redirects=False) as response:
        _refuse_redirect(response, f"GET {path}")
        text = await response.text()
        if response.status != 200:
            raise RecordError(f"{url} does not look like llama-server: GET {path} answered HTTP {response.status}")
    try:
        data = json.loads(text)
    except ValueError:
        raise RecordError(f"{url} does not look like llama-server: GET {path} did not answer JSON") from None
    if not isinstance(data, dict):
        raise RecordError(f"{url} does not look like llama-server: GET {path} did not answer a JSON object")
    return data


def _client_error(url: str, err: aiohttp.ClientError, doing: str) -> RecordError:
    """One line for anything aiohttp raises: a refused connection, a bad status line, a cut body."""
    if isinstance(err, aiohttp.ClientConnectorError):
        return RecordError(f"cannot reach a server at {url} ({scrub_text(str(err))}). Is llama-server running there?")
    detail = " ".join(scrub_text(str(err)).split())[:200] or type(err).__name__
    return RecordError(f"{url} {doing}: {type(err).__name__}: {detail}")


async def probe(
    url: str,
    timeout: float,
    headers: dict,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    auth: aiohttp.BasicAuth | None = None,
) -> ServerInfo:
    """Check that a llama-server answers at ``url`` and read what provenance needs."""
    try:
        async with _session(timeout, headers, max_reply_bytes, auth) as session:
            await _get_json(session, url, "/health")
            props = await _get_json(session, url, "/props")
            models = await _get_json(session, url, "/v1/models")
    except aiohttp.ClientError as err:
        raise _client_error(url, err, "gave a reply that cannot be read") from None
    except asyncio.TimeoutError:  # the builtin TimeoutError only from Python 3.11
        raise RecordError(f"{url} did not answer within {timeout:g} s") from None
    if "default_generation_settings" not in props:
        raise RecordError(f"{url} does not look like llama-server: GET /props has no default_generation_settings")
    return ServerInfo(props, models)


async def _send(session: aiohttp.ClientSession, url: str, planned: PlannedRequest) -> tuple[int, bytes]:
    # Always a text body (never aiohttp's json=): vcrpy then stores the exact string sent, key order
    # included, where a json= body would become a YAML mapping with its keys sorted.
    kwargs: dict[str, Any] = {"headers": planned.send_headers()}
    body = planned.body_text()
    if body is not None:
        kwargs["data"] = body.encode("utf-8")
    async with session.request(planned.method, url + planned.path, allow_redirects=False, **kwargs) as response:
        _refuse_redirect(response, planned.describe())
        return response.status, await response.read()


async def _send_turns(session: aiohttp.ClientSession, url: str, entry: CatalogueScenario) -> list[list]:
    """Every turn's requests, in order: each later turn is built from the reply to the one before."""
    turns, planned, body = [], entry.planned(), entry.responses
    for number in range(1, len(entry.turns) + 2):
        turns.append([(request, *await _send(session, url, request)) for request in planned])
        if number <= len(entry.turns):
            status, reply = turns[-1][0][1], turns[-1][0][2]  # the non-streamed Responses reply
            if status != 200:
                raise RecordError(
                    f"scenario {entry.name!r}: turn {number} answered HTTP {status}, "
                    f"so turn {number + 1} cannot follow it"
                )
            assert body is not None  # only a responses scenario has turns (catalogue._turns)
            try:
                body = entry.next_turn(number, body, json.loads(reply))
            except CatalogueError as err:
                raise RecordError(str(err)) from None
            planned = responses_requests(body)
    return turns


def _finish_reason(body: bytes) -> str | None:
    try:
        return json.loads(body)["choices"][0]["finish_reason"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _status(body: bytes) -> str | None:
    try:
        return json.loads(body).get("status")
    except (ValueError, AttributeError):
        return None


def _summarise(entry: CatalogueScenario, turns: list[list[tuple[PlannedRequest, int, bytes]]]) -> str:
    if entry.responses is None:
        return " ".join(f"{planned.path}:{status}" for planned, status, _ in turns[0])
    summaries = []
    for replies in turns:
        responses = next(body for planned, _, body in replies if planned.path == RESPONSES_PATH)
        chat = next(body for planned, _, body in replies if planned.path == CHAT_PATH)
        summaries.append(f"responses={_status(responses)} twin={_finish_reason(chat)}")
    if len(summaries) == 1:
        return summaries[0]
    return " ".join(f"turn{number}:{summary}" for number, summary in enumerate(summaries, start=1))


def _vcr():
    import vcr

    return vcr.VCR(
        record_mode="all",
        before_record_request=scrub_request,
        before_record_response=scrub_response,
        decode_compressed_response=True,
    )


async def record_scenario(
    entry: CatalogueScenario,
    url: str,
    out_dir: Path,
    timeout: float,
    headers: dict,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    auth: aiohttp.BasicAuth | None = None,
) -> Outcome:
    """Record one scenario into ``out_dir/NAME.yaml``, or leave any old cassette as it was. A reply
    over ``max_reply_bytes`` fails this scenario alone; the server failing stops the whole run."""
    return await record_into(out_dir / f"{entry.name}.yaml", entry, url, timeout, headers, max_reply_bytes, auth)


async def record_into(
    final: Path,
    entry: CatalogueScenario,
    url: str,
    timeout: float,
    headers: dict,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    auth: aiohttp.BasicAuth | None = None,
) -> Outcome:
    """Record one scenario into the cassette ``final`` (see record_scenario)."""
    try:
        with partial_file(final) as partial:
            with _vcr().use_cassette(str(partial), record_on_exception=False):
                async with _session(timeout, headers, max_reply_bytes, auth) as session:
                    replies = await _send_turns(session, url, entry)
            os.replace(partial, final)
    except ReplyTooLarge as err:
        return Outcome(entry.name, f"FAILED: {err}", failed=True)
    except aiohttp.ClientError as err:
        raise _client_error(url, err, f"failed while recording {entry.name!r}") from None
    except asyncio.TimeoutError:  # the builtin TimeoutError only from Python 3.11
        raise RecordError(f"{url} took over {timeout:g} s to answer while recording {entry.name!r}") from None
    return Outcome(entry.name, _summarise(entry, replies), note=entry.note)


def _write_atomically(path: Path, text: str) -> None:
    with partial_file(path) as partial:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)


def write_provenance(
    out_dir: Path,
    url: str,
    info: ServerInfo,
    outcomes: list[Outcome],
    catalogue: str | None,
    server_command: str | None,
    server_patch: Path | None = None,
    recorded_by: str = "mockllama record",
    setup: dict | None = None,
) -> Path:
    path = out_dir / PROVENANCE_FILE
    scenarios, notes = {}, {}
    with contextlib.suppress(OSError, ValueError, AttributeError):
        earlier = json.loads(path.read_text())  # keep earlier partial runs
        scenarios, notes = dict(earlier.get("scenarios", {})), dict(earlier.get("notes", {}))
    scenarios.update({outcome.scenario: outcome.summary for outcome in outcomes if not outcome.failed})
    notes.update({outcome.scenario: outcome.note for outcome in outcomes if not outcome.failed and outcome.note})
    provenance = {
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "recorded_by": f"mockllama {__version__} ({recorded_by})",
        "server_url": split_credentials(url)[0],
        "server_command": scrub_command(server_command),
        "build_info": info.props.get("build_info"),
        "model": info.model,
        "model_path": info.props.get("model_path"),
        "chat_template_sha256": info.chat_template_sha256,
        "n_ctx": (info.props.get("default_generation_settings") or {}).get("n_ctx"),
        "total_slots": info.props.get("total_slots"),
        "catalogue": catalogue,
        "scenarios": dict(sorted(scenarios.items())),
    }
    if notes:
        provenance["notes"] = dict(sorted(notes.items()))
    if server_patch is not None:  # a patched build: name the patch, and pin it by its sha256
        provenance["server_patch"] = {
            "file": server_patch.name,
            "sha256": hashlib.sha256(server_patch.read_bytes()).hexdigest(),
        }
    if setup is not None:  # checked against the server's template by require_setup
        provenance.update(
            setup=setup["name"],
            chat_template_file=setup["chat_template_file"],
            chat_template_file_sha256=setup["chat_template_sha256"],
            note=setup["note"],
        )
    _write_atomically(path, json.dumps(provenance, indent=2) + "\n")
    return path
