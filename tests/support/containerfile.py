"""The Containerfile as the tests read it: its text, the install stage's pip install, BASE's default."""

from __future__ import annotations

import re

from support import ROOT

CONTAINERFILE = ROOT / "Containerfile"


def text() -> str:
    return CONTAINERFILE.read_text(encoding="utf-8")


def install_command() -> list[str]:
    """The words after `install` in the install stage's `pip install`, its line continuations joined."""
    joined = text().replace("\\\n", " ")
    [line] = [line for line in joined.splitlines() if line.startswith("RUN ") and "pip install" in line]
    words = line.split()
    start = words.index("install", words.index("/opt/mockllama/bin/pip"))
    return words[start + 1 : words.index("&&", start)]


def option_value(words: list[str], *names: str) -> str | None:
    """The value of the first of these options in ``words`` (``--name VALUE`` or ``--name=VALUE``)."""
    for i, word in enumerate(words):
        name, equals, value = word.partition("=")
        if name in names:
            return value if equals else words[i + 1]
    return None


def base_default() -> str:
    """``ARG BASE=``'s value: the image the build starts from unless told."""
    [base] = re.findall(r"^ARG BASE=(\S+)$", text(), re.MULTILINE)
    return base
