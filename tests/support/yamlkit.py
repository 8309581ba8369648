"""The bundled cassettes read straight from their YAML, without mockllama's own loader.

Tests that take expected values from the recordings use this, so that a bug in
``mockllama.recordings.cassettes`` (or in the code it feeds) cannot make the expectation agree with it.
A request body may be stored as a mapping (vcrpy's ``json=``) or as a string (``data=``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from support import ROOT

CASSETTE_DIR = ROOT / "cassettes"


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    request: object  # the request body as JSON, the raw string when it is not JSON, or None
    status: int
    body: str

    @property
    def stream(self) -> bool:
        return isinstance(self.request, dict) and self.request.get("stream") is True

    def events(self) -> list[dict]:
        """The JSON payloads of a recorded SSE body, in order ([DONE] left out)."""
        payloads = []
        for block in self.body.split("\n\n"):
            for line in block.split("\n"):
                if line.startswith("data: ") and line[6:].startswith("{"):
                    payloads.append(json.loads(line[6:]))
        return payloads

    def json(self) -> dict:
        return json.loads(self.body)


def _request_body(body):
    if body is None or isinstance(body, (dict, list)):
        return body
    text = body.decode("utf-8") if isinstance(body, bytes) else str(body)
    try:
        return json.loads(text)
    except ValueError:
        return text


def cassette_path(name: str) -> Path:
    return next(CASSETTE_DIR.rglob(f"{name}.yaml"))


def read(name: str) -> list[Recorded]:
    """Every interaction of the bundled cassette ``name``, in recorded order."""
    data = yaml.safe_load(cassette_path(name).read_text(encoding="utf-8"))
    recorded = []
    for interaction in data["interactions"]:
        request, response = interaction["request"], interaction["response"]
        body = response["body"]["string"]
        recorded.append(
            Recorded(
                method=request["method"].upper(),
                path=urlsplit(request["uri"]).path,
                request=_request_body(request.get("body")),
                status=int(response["status"]["code"]),
                body=body.decode("utf-8") if isinstance(body, bytes) else body,
            )
        )
    return recorded


def find(name: str, path: str, stream: bool) -> Recorded:
    return next(r for r in read(name) if r.method == "POST" and r.path == path and r.stream == stream)


def chat_finish_reason(name: str, stream: bool) -> str | None:
    twin = find(name, "/v1/chat/completions", stream)
    if stream:
        reasons = [
            c.get("finish_reason") for e in twin.events() for c in e.get("choices", []) if c.get("finish_reason")
        ]
        return reasons[-1] if reasons else None
    return twin.json()["choices"][0]["finish_reason"]


def timings(name: str, path: str, stream: bool) -> dict:
    """The ``timings`` llama-server put in a recorded reply (the last one, for a stream)."""
    recorded = find(name, path, stream)
    payloads = recorded.events() if stream else [recorded.json()]
    return next(p["timings"] for p in reversed(payloads) if "timings" in p)
