"""The scenario a miss is recorded into: the name the client chose (``X-Mockllama-Scenario``), else a
readable slug of the request, and only ever the record directory's own ``NAME.yaml``."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from mockllama.matching.matcher import Matcher
from mockllama.matching.pipeline import canonical_key
from mockllama.recordings.cassettes import bundled_names, request_limit
from mockllama.upstream.flight import Sent
from mockllama.wire.errors import RequestError

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def prompt_text(body) -> str:
    """The last user turn's text, for a readable file name."""
    if not isinstance(body, dict):
        return ""
    turns = body.get("input") if "input" in body else body.get("messages")
    if isinstance(turns, str):
        return turns
    for turn in reversed(turns if isinstance(turns, list) else []):
        if isinstance(turn, dict) and turn.get("role", "user") == "user":
            content = turn.get("content")
            if isinstance(content, list):
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def slug_name(sent: Sent) -> str:
    """``count-from-1-to-200-separated-by-spaces-8-1a2b3c``: prompt, limit, and a digest of the
    request (stream flag aside, so the streamed and plain variants share one cassette)."""
    if sent.method == "GET":
        return "get-" + re.sub(r"[^a-z0-9]+", "-", sent.path.lower()).strip("-")
    body = sent.body
    words = re.sub(r"[^a-z0-9]+", "-", prompt_text(body).lower()).strip("-")[:40].strip("-")
    words = words or re.sub(r"[^a-z0-9]+", "-", sent.path.lower()).strip("-")
    limit = request_limit(body)
    same = canonical_key(sent.path, {**body, "stream": False}) if isinstance(body, dict) else repr(sent.raw)
    # surrogatepass: a lone surrogate ("\ud800") is valid in a JSON string, not in UTF-8
    digest = hashlib.sha256(f"{sent.method} {sent.path} {same}".encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return "-".join([words, *([str(limit)] if limit is not None else []), digest])


def target_name(sent: Sent, matcher: Matcher, record_to: Path) -> str:
    """The scenario to record into: the X-Mockllama-Scenario header's, else a slug. Only the
    record directory's own NAME.yaml is ever recorded into: a name another loaded cassette
    holds is refused when a client chose it, and passed over (``-2``, ``-3``...) when it is a
    slug, so that the next start never finds one name twice."""
    if sent.scenario_header is None:
        slug = name = slug_name(sent)
        number = 1
        while not _ours(name, matcher, record_to):
            number += 1
            name = f"{slug}-{number}"
        return name
    name = sent.scenario_header.strip()
    if not NAME.fullmatch(name):
        raise RequestError(
            400,
            f"mockllama: cannot record into the scenario {name!r} (from X-Mockllama-Scenario): "
            "a name is a file name of letters, digits, '.', '_' and '-'.",
        )
    if name in bundled_names() and not _ours(name, matcher, record_to):
        raise RequestError(
            400,
            f"mockllama: cannot record into the scenario {name!r} (from X-Mockllama-Scenario): a bundled "
            "recording has that name, and the pytest plugin serves the bundled recordings beside the "
            "record directory, where one name may appear once. Choose another name to record this request.",
        )
    if not _ours(name, matcher, record_to):
        raise RequestError(
            400,
            f"mockllama: the scenario {name!r} (from X-Mockllama-Scenario) comes from "
            f"{matcher.scenarios[name].source}, not from the record directory's "
            f"{_file(record_to, name)}, and is never recorded over. Choose another name to "
            "record this request.",
        )
    return name


def _file(record_to: Path, name: str) -> Path:
    return record_to / f"{name}.yaml"


def _ours(name: str, matcher: Matcher, record_to: Path) -> bool:
    """Whether recording into NAME.yaml leaves every loaded name once: no scenario has it yet
    (nor a bundled one, which the pytest plugin loads beside it), or the one that has it is
    that very file."""
    owner = matcher.scenarios.get(name)
    if owner is None:
        return name not in bundled_names()
    return owner.source.resolve() == _file(record_to, name).resolve()
