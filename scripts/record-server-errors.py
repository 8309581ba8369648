"""Record llama-server's own error replies, for mockllama's status=CODE fault, from a fresh server.

    python scripts/record-server-errors.py OUT_DIR [PORT]

Starts llama-server exactly as scripts/llama-server.sh does, plus ``--api-key`` with a throwaway
key (never written anywhere), and records with mockllama's own recorder:

- ``server-loading``: a request sent while the model is still loading (HTTP 503), retried from
  the moment the port opens until one is answered 503; if the model loads first, nothing is
  written for it and the script says so;
- ``server-errors`` (``mockllama record`` with mockllama/recordings/catalogues/server-errors.json): a
  request over the context size (-c 4096), a wrong API key, an endpoint the server was not
  started for (/v1/embeddings), and an unknown route.
"""

from __future__ import annotations

import asyncio
import secrets
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from mockllama.recordings.catalogue import load_catalogue
from mockllama.recordings.record import probe, record_scenario, write_provenance

ROOT = Path(__file__).resolve().parent.parent
CATALOGUES = ROOT / "mockllama" / "recordings" / "catalogues"


def _health(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as reply:
            return reply.status
    except urllib.error.HTTPError as err:
        return err.code
    except OSError:
        return None


async def record_while_loading(url: str, out: Path, headers: dict) -> str | None:
    (entry,) = load_catalogue(CATALOGUES / "server-loading.json")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = _health(url)
        if status == 200:
            return None  # loaded before a request got in
        if status == 503:
            outcome = await record_scenario(entry, url, out, 30, headers)
            if outcome.summary.endswith(":503"):
                return outcome.summary
        await asyncio.sleep(0.01)
    return None


async def main(out: Path, port: int) -> None:
    key = secrets.token_hex(16)
    command = subprocess.run(
        ["bash", str(ROOT / "scripts" / "llama-server.sh"), "command", str(port)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    url = f"http://127.0.0.1:{port}"
    out.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(
        [*shlex.split(command), "--api-key", key], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    headers = {"Authorization": f"Bearer {key}"}
    try:
        loading = await record_while_loading(url, out, headers)
        print(f"server-loading: {loading or 'NOT recorded: the model loaded before a request got a 503'}")
        while _health(url) != 200:
            time.sleep(0.2)
        info = await probe(url, 60, headers)
        (entry,) = load_catalogue(CATALOGUES / "server-errors.json")
        outcome = await record_scenario(entry, url, out, 120, headers)
        print(f"server-errors: {outcome.summary}")
        outcomes = [outcome]
        if loading:
            from mockllama.recordings.record import Outcome

            outcomes.append(Outcome("server-loading", loading))
        shown = f"{command} --api-key KEY  (a throwaway key, not recorded)"
        write_provenance(
            out,
            url,
            info,
            outcomes,
            "mockllama/recordings/catalogues/server-errors.json and server-loading.json",
            shown,
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 18095))
