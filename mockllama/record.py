"""Capture a catalogue of scenarios from a live llama-server into vcrpy cassettes.

vcrpy itself records: each scenario's requests go through an aiohttp client inside
``use_cassette``. Secrets are scrubbed before vcrpy writes anything, and each cassette is written
to a temporary file that is renamed into place only when the scenario is complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import vcr

from . import __version__
from .cassettes import CHAT_PATH, RESPONSES_PATH
from .catalogue import CatalogueScenario, PlannedRequest

# Never written into a cassette, in requests or responses.
SECRET_HEADERS = ("authorization", "api-key", "x-api-key", "cookie", "set-cookie", "proxy-authorization")
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


@dataclass(frozen=True)
class Outcome:
    scenario: str
    summary: str  # e.g. "responses=completed twin=length"


def scrub_request(request):
    for name in list(request.headers):
        if name.lower() in SECRET_HEADERS:
            del request.headers[name]
    return request


def scrub_response(response: dict) -> dict:
    headers = response.get("headers") or {}
    for name in list(headers):
        if name.lower() in SECRET_HEADERS:
            del headers[name]
    return response


def _session(timeout: float, headers: dict) -> aiohttp.ClientSession:
    # llama-server answers "Connection: close"; reusing a connection fails on the next request.
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(force_close=True),
        timeout=aiohttp.ClientTimeout(total=timeout, sock_connect=10),
        headers=headers,
    )


async def _get_json(session: aiohttp.ClientSession, url: str, path: str) -> dict:
    async with session.get(url + path) as response:
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


async def probe(url: str, timeout: float, headers: dict) -> ServerInfo:
    """Check that a llama-server answers at ``url`` and read what provenance needs."""
    try:
        async with _session(timeout, headers) as session:
            await _get_json(session, url, "/health")
            props = await _get_json(session, url, "/props")
            models = await _get_json(session, url, "/v1/models")
    except aiohttp.ClientConnectionError as err:
        raise RecordError(f"cannot reach a server at {url} ({err}). Is llama-server running there?") from None
    except asyncio.TimeoutError:  # the builtin TimeoutError only from Python 3.11
        raise RecordError(f"{url} did not answer within {timeout:g} s") from None
    if "default_generation_settings" not in props:
        raise RecordError(f"{url} does not look like llama-server: GET /props has no default_generation_settings")
    return ServerInfo(props, models)


async def _send(session: aiohttp.ClientSession, url: str, planned: PlannedRequest) -> tuple[int, bytes]:
    # Always a text body (never aiohttp's json=): vcrpy then stores the exact string sent, key order
    # included, where a json= body would become a YAML mapping with its keys sorted.
    kwargs = {"headers": planned.send_headers()}
    body = planned.body_text()
    if body is not None:
        kwargs["data"] = body.encode("utf-8")
    async with session.request(planned.method, url + planned.path, **kwargs) as response:
        return response.status, await response.read()


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


def _summarise(entry: CatalogueScenario, replies: list[tuple[PlannedRequest, int, bytes]]) -> str:
    if entry.responses is not None:
        responses = next(body for planned, _, body in replies if planned.path == RESPONSES_PATH)
        chat = next(body for planned, _, body in replies if planned.path == CHAT_PATH)
        return f"responses={_status(responses)} twin={_finish_reason(chat)}"
    return " ".join(f"{planned.path}:{status}" for planned, status, _ in replies)


def _vcr() -> vcr.VCR:
    return vcr.VCR(
        record_mode="all",
        before_record_request=scrub_request,
        before_record_response=scrub_response,
        decode_compressed_response=True,
    )


async def record_scenario(entry: CatalogueScenario, url: str, out_dir: Path, timeout: float, headers: dict) -> Outcome:
    """Record one scenario into ``out_dir/NAME.yaml``, or leave any old cassette as it was."""
    final = out_dir / f"{entry.name}.yaml"
    partial = out_dir / f".{entry.name}.yaml.partial-{os.getpid()}"
    partial.unlink(missing_ok=True)
    try:
        with _vcr().use_cassette(str(partial), record_on_exception=False):
            async with _session(timeout, headers) as session:
                replies = [(planned, *await _send(session, url, planned)) for planned in entry.planned()]
        os.replace(partial, final)
    except aiohttp.ClientConnectionError as err:
        raise RecordError(f"lost the server at {url} while recording {entry.name!r} ({err})") from None
    except asyncio.TimeoutError:  # the builtin TimeoutError only from Python 3.11
        raise RecordError(f"{url} took over {timeout:g} s to answer while recording {entry.name!r}") from None
    finally:
        partial.unlink(missing_ok=True)
    return Outcome(entry.name, _summarise(entry, replies))


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def write_provenance(out_dir: Path, url: str, info: ServerInfo, outcomes: list[Outcome], catalogue: str,
                     server_command: str | None, server_patch: Path | None = None) -> Path:
    path = out_dir / PROVENANCE_FILE
    scenarios = {}
    with contextlib.suppress(OSError, ValueError, AttributeError):
        scenarios = dict(json.loads(path.read_text()).get("scenarios", {}))  # keep earlier partial runs
    scenarios.update({outcome.scenario: outcome.summary for outcome in outcomes})
    template = info.props.get("chat_template") or ""
    provenance = {
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "recorded_by": f"mockllama {__version__} (mockllama record)",
        "server_url": url,
        "server_command": server_command,
        "build_info": info.props.get("build_info"),
        "model": info.model,
        "model_path": info.props.get("model_path"),
        "chat_template_sha256": hashlib.sha256(template.encode("utf-8")).hexdigest(),
        "n_ctx": (info.props.get("default_generation_settings") or {}).get("n_ctx"),
        "total_slots": info.props.get("total_slots"),
        "catalogue": catalogue,
        "scenarios": dict(sorted(scenarios.items())),
    }
    if server_patch is not None:  # a patched build: name the patch, and pin it by its sha256
        provenance["server_patch"] = {"file": server_patch.name,
                                      "sha256": hashlib.sha256(server_patch.read_bytes()).hexdigest()}
    _write_atomically(path, json.dumps(provenance, indent=2) + "\n")
    return path
