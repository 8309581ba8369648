"""The container image's pinned dependencies: constraints/image.txt, read, and the rule for what a
set of requirements needs, which scripts/image-constraints makes that file with and the tests hold
it to.

The file is ``name==version`` lines (and comments): every package the image installs besides
mockllama, at one version for every Python an image's BASE may have.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]  # the checkout (no import of support: scripts use this too)
CONSTRAINTS = ROOT / "constraints" / "image.txt"
REFRESH = "scripts/image-constraints"
PIN = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!-]+)")


def pin_lines(text: str) -> list[tuple[str, str]]:
    """The file's ``(canonical name, version)`` lines, in order, duplicates kept; a line that is
    neither a comment nor ``name==version`` raises ValueError."""
    pins = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        matched = PIN.fullmatch(line)
        if not matched:
            raise ValueError(f"line {number} is not name==version: {line!r}")
        pins.append((canonicalize_name(matched["name"]), matched["version"]))
    return pins


def pins(path: Path = CONSTRAINTS) -> dict[str, str]:
    """``{canonical name: version}`` of the constraints file."""
    return dict(pin_lines(path.read_text(encoding="utf-8")))


def _applies(marker: Marker | None, environments: list[dict[str, str]], extras: list[str]) -> bool:
    """Whether a requirement with this marker is needed in any of the environments, for the
    package asked for with one of these extras (``""``: with none)."""
    if marker is None:
        return True
    return any(marker.evaluate({**env, "extra": extra}) for env in environments for extra in extras)


def needed(
    requirements: Iterable[str],
    requires_of: Callable[[str], list[str] | None],
    environments: Iterable[dict[str, str]] = ({},),
) -> dict[str, list[Requirement]]:
    """Every package ``requirements`` need, directly or through what they need, in any of the
    marker ``environments`` (each laid over the running interpreter's; ``{}`` is that one):
    ``{canonical name: the requirements that ask for it}``. A requirement whose marker holds in none
    is left out, so a package's own Requires-Dist, its extras' lines and all, will do as
    ``requirements``. ``requires_of(name)`` gives a package's Requires-Dist, or None when it is not
    at hand: it is then in the answer, and not walked further."""
    environments = list(environments)
    found: dict[str, list[Requirement]] = {}
    walked: set[tuple[str, str]] = set()  # (name, extra) whose requirements have been read
    pending = [r for r in map(Requirement, requirements) if _applies(r.marker, environments, [""])]
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        found.setdefault(name, []).append(requirement)
        extras = [extra for extra in ("", *requirement.extras) if (name, extra) not in walked]
        if not extras:
            continue
        walked.update((name, extra) for extra in extras)
        for text in requires_of(name) or ():
            dependency = Requirement(text)
            if _applies(dependency.marker, environments, extras):
                pending.append(dependency)
    return found
