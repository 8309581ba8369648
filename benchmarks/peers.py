"""The mock servers a user would pick instead of mockllama, set up to answer the benchmark's requests.

- **aimock** (npm ``@copilotkit/aimock``): fixture-driven, multi-provider, with its own
  ``/v1/responses`` handler. It builds each reply from a fixture (text or tool calls plus
  overrides), so the fixture is made from our cassette: the same text or tool call, ids, model,
  usage and ``created_at``, and for the stream a chunk size that gives as many argument deltas
  as llama-server sent. The bytes are aimock's own envelope around those values.
- **mock-llm** (npm ``@dwmkerr/mock-llm``): the most downloaded OpenAI-compatible mock server in
  the npm registry's list here after aimock; rules match a path and a JMESPath expression and
  answer any JSON body, so it serves the recorded ``text-cut-8`` body itself. It streams only
  ``chat.completion.chunk`` events, so it has no answer for a streamed ``/v1/responses`` request:
  the stream workload is not measured for it.

Both install into one directory (``--install-peers``; ``MOCKLLAMA_PEERS_DIR`` or
``~/.cache/mockllama/peers``) with ``npm ci --ignore-scripts``, from the lockfile in
``benchmarks/npm/``: the same versions of every dependency each time, and no package's install
scripts run (none in the tree has any). They run on Node.js.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness import STREAM, TEXT, Contender
from mockllama.recordings.cassettes import Interaction, bundled_cassette_dir, load_scenarios
from mockllama.recordings.catalogue import load_catalogue
from mockllama.wire.routes import RESPONSES_PATH

# package.json names the peers' versions; package-lock.json pins everything they bring with them.
NPM_PROJECT = Path(__file__).resolve().parent / "npm"
LOCKFILE_FILES = ("package.json", "package-lock.json")


def peers_dir() -> Path:
    return Path(os.environ.get("MOCKLLAMA_PEERS_DIR") or Path.home() / ".cache" / "mockllama" / "peers")


@dataclass(frozen=True)
class Peer:
    name: str
    package: str  # its npm package, at the version benchmarks/npm/package.json names
    entry: str  # the server's script inside node_modules
    workloads: tuple[tuple[str, bool], ...]  # what it can answer

    @property
    def script(self) -> Path:
        return peers_dir() / "node_modules" / self.entry

    def missing(self) -> str | None:
        """None when the peer can run here; else what to do about it."""
        if shutil.which("node") is None:
            return f"{self.name} needs Node.js: apt-get install nodejs npm, then python -m benchmarks --install-peers"
        if not self.script.is_file():
            return (
                f"{self.name} is not installed in {peers_dir()}: python -m benchmarks --install-peers "
                f"(runs npm ci --ignore-scripts there, from {NPM_PROJECT / 'package-lock.json'})"
            )
        return None


AIMOCK = Peer("aimock", "@copilotkit/aimock", "@copilotkit/aimock/dist/cli.js", (TEXT, STREAM))
MOCK_LLM = Peer("mock-llm", "@dwmkerr/mock-llm", "@dwmkerr/mock-llm/dist/main.js", (TEXT,))
PEERS = (AIMOCK, MOCK_LLM)


def install_command() -> list[str]:
    """npm ci into peers_dir(): exactly the lockfile's tree, with no install scripts run."""
    return ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(peers_dir())]


def install_peers() -> None:
    """Every peer into peers_dir(), as benchmarks/npm/package-lock.json pins them; an error says what failed."""
    if shutil.which("npm") is None:
        raise RuntimeError("installing the peers needs npm: apt-get install nodejs npm")
    peers_dir().mkdir(parents=True, exist_ok=True)
    for name in LOCKFILE_FILES:  # npm ci reads both from the directory it installs into
        shutil.copyfile(NPM_PROJECT / name, peers_dir() / name)
    subprocess.run(install_command(), check=True)


# --- what the peers are told to answer, built from our cassettes --------------------------------


def recorded(workload: tuple[str, bool]) -> Interaction:
    scenarios = load_scenarios([bundled_cassette_dir()])
    scenario, stream = workload
    return scenarios[scenario].find("POST", RESPONSES_PATH, stream)


def request_json(workload: tuple[str, bool]) -> dict:
    """The request the bench sends for a workload (the catalogue's, as recorded)."""
    scenario, stream = workload
    entry = next(e for e in load_catalogue() if e.name == scenario)
    return next(p for p in entry.planned() if p.path == RESPONSES_PATH and p.json["stream"] is stream).json


def user_prompt(body: dict) -> str:
    """The last user message's text in a Responses request: what aimock matches on."""
    if isinstance(body["input"], str):
        return body["input"]
    return next(item["content"] for item in reversed(body["input"]) if item.get("role") == "user")


def _usage(usage: dict) -> dict:
    return {
        "input_tokens": usage["input_tokens"],
        "output_tokens": usage["output_tokens"],
        "total_tokens": usage["total_tokens"],
    }


def aimock_fixtures() -> dict:
    """aimock's fixture file: text-cut-8's text and poem-finishes' tool call, with the recorded ids."""
    text = recorded(TEXT).body_json
    message = text["output"][0]
    text_fixture = {
        "match": {"userMessage": user_prompt(request_json(TEXT))},
        "response": {
            "content": message["content"][0]["text"],
            "id": text["id"],
            "created": text["created_at"],
            "model": text["model"],
            "usage": _usage(text["usage"]),
        },
    }
    stream = recorded(STREAM)
    completed = stream.events[-1].json()["response"]
    call = completed["output"][0]
    deltas = sum(1 for event in stream.events if event.name == "response.function_call_arguments.delta")
    stream_fixture = {
        "match": {"userMessage": user_prompt(request_json(STREAM))},
        "response": {
            "toolCalls": [{"name": call["name"], "arguments": call["arguments"], "id": call["call_id"]}],
            "id": completed["id"],
            "created": completed["created_at"],
            "model": completed["model"],
            "usage": _usage(completed["usage"]),
        },
        # as many argument deltas as llama-server sent
        "chunkSize": math.ceil(len(call["arguments"]) / deltas),
    }
    return {"fixtures": [text_fixture, stream_fixture]}


def _jmespath_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def mock_llm_config() -> dict:
    """mock-llm's rules: the recorded text-cut-8 body for its request, nothing else."""
    body = request_json(TEXT)
    match = f"body.input == {_jmespath_string(body['input'])} && body.stream == `false`"
    rule = {
        "path": f"^{RESPONSES_PATH}$",
        "method": "POST",
        "match": match,
        "response": {"status": 200, "content": recorded(TEXT).body.decode("utf-8")},
    }
    return {"rules": [rule]}


def peer_contender(peer: Peer, port: int, workdir: Path) -> Contender:
    """``peer`` served on ``port``, its fixture written in ``workdir``."""
    if peer is AIMOCK:
        fixture = workdir / "aimock-fixtures.json"
        fixture.write_text(json.dumps(aimock_fixtures(), indent=1))
        command = ("node", str(peer.script), "--port", str(port), "--host", "127.0.0.1", "--fixtures", str(fixture))
        return Contender(peer.name, (*command, "--log-level", "silent"), port, dict(os.environ), peer.workloads)
    config = workdir / "mock-llm.yaml"  # JSON is YAML
    config.write_text(json.dumps(mock_llm_config(), indent=1))
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(port)}
    return Contender(peer.name, ("node", str(peer.script), "--config", str(config)), port, env, peer.workloads)


# --- fidelity: what a client sees of each reply ----------------------------------------------------


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    framed: list[bytes] | None  # the HTTP chunks of a chunked reply, as framed; None with Content-Length


def raw_reply(port: int, body: bytes, timeout: float = 10) -> Reply:
    """One POST over a plain socket, the reply read to the end and its chunked framing kept."""
    request = (
        f"POST {RESPONSES_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in lines[1:])}
    if headers.get("transfer-encoding", "").lower() != "chunked":
        return Reply(int(lines[0].split()[1]), headers, rest, None)
    framed = chunks(rest)
    return Reply(int(lines[0].split()[1]), headers, b"".join(framed), framed)


def chunks(body: bytes) -> list[bytes]:
    """The chunks of an HTTP/1.1 chunked body, as framed on the wire."""
    found = []
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        found.append(body[:size])
        body = body[size + 2 :]
    return found


def event_names(stream: bytes) -> list[str]:
    return [line[len("event:") :].strip() for line in stream.decode("utf-8").splitlines() if line.startswith("event:")]


def one_block_per_chunk(reply: Reply) -> str:
    """What a client reading chunk by chunk sees: one SSE block per chunk, as llama-server sends."""
    if reply.framed is None:
        return "n/a (one Content-Length body)"
    blocks = [block for block in reply.body.split(b"\n\n") if block.strip()]
    aligned = all(chunk.endswith(b"\n\n") and chunk.count(b"\n\n") == 1 for chunk in reply.framed)
    return "yes" if aligned else f"no ({len(blocks)} blocks in {len(reply.framed)} chunks)"


def fidelity_row(name: str, port: int, workloads) -> dict[str, str]:
    """The fidelity points, measured on the contender's own replies against the recordings."""
    row = {"contender": name}
    if TEXT in workloads:
        reply = raw_reply(port, json.dumps(request_json(TEXT)).encode())
        expected = recorded(TEXT).body
        row["json"] = (
            "same bytes" if reply.body == expected else f"differs ({len(reply.body)} B, recorded {len(expected)} B)"
        )
    else:
        row["json"] = "not served"
    if STREAM in workloads:
        reply = raw_reply(port, json.dumps(request_json(STREAM)).encode())
        expected = recorded(STREAM)
        names, want = event_names(reply.body), [event.name for event in expected.events]
        row["bytes"] = (
            "same bytes"
            if reply.body == expected.body
            else f"differs ({len(reply.body)} B, recorded {len(expected.body)} B)"
        )
        row["events"] = (
            "same names, same order"
            if names == want
            else f"{len(names)} events ({', '.join(sorted(set(names) - set(want))) or 'no other names'} "
            f"added; {', '.join(sorted(set(want) - set(names))) or 'none'} missing)"
        )
        row["chunks"] = one_block_per_chunk(reply)
    else:
        row["bytes"] = row["events"] = row["chunks"] = "no Responses stream"
    return row


def fidelity_table(rows: list[dict[str, str]]) -> str:
    lines = [
        "| contender | text-cut-8 json body | poem-finishes stream body | stream events "
        "| one SSE block per HTTP chunk |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [f"| {r['contender']} | {r['json']} | {r['bytes']} | {r['events']} | {r['chunks']} |" for r in rows]
    return "\n".join(lines)
