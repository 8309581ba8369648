"""Real clients' request bodies, byte for byte as each sent them (client_bodies/README.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

BODIES = Path(__file__).resolve().parent / "client_bodies" / "bodies.jsonl"


@dataclass(frozen=True)
class ClientRequest:
    name: str  # client-api-call-kind, as captured: "llama-index-responses-complete-text"
    path: str
    turn: int
    user_agent: str | None
    body: str  # the exact text sent

    @property
    def json(self) -> dict:
        return json.loads(self.body)


CLIENT_REQUESTS = {
    request.name: request
    for request in (ClientRequest(**json.loads(line)) for line in BODIES.read_text(encoding="utf-8").splitlines())
}
