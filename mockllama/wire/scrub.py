"""Credentials kept out of everything the recorder writes: headers, URLs and command lines.

A header is a secret when its name looks like one (Authorization, X-Api-Key, X-Auth-Token,
Cookie, ...), not only when it is on a fixed list. A URL loses its user:password part. A command
line loses the value of any option or environment assignment named like a secret, any URL's
user:password, and anything shaped like a well-known API key.
"""

from __future__ import annotations

import re
import shlex

from yarl import URL

REDACTED = "REDACTED"
_SECRET_WORDS = r"auth|key|token|secret|passw|pwd|cookie|session|credential|signature|bearer|private"
_SECRET_NAME = re.compile(_SECRET_WORDS, re.IGNORECASE)
# --api-key X, --hf-token=X, API_KEY=X, HF_TOKEN=X
_SECRET_OPTION = re.compile(rf"^(-{{1,2}}[\w-]*(?:{_SECRET_WORDS})[\w-]*)(=.*)?$", re.IGNORECASE)
_SECRET_ASSIGNMENT = re.compile(rf"^([A-Za-z_]\w*(?:{_SECRET_WORDS})\w*)=(.+)$", re.IGNORECASE)
_SECRET_HEADER_LINE = re.compile(rf"^([\w-]*(?:{_SECRET_WORDS})[\w-]*)\s*:\s*\S.*$", re.IGNORECASE)
_BEARER = re.compile(r"\b(Bearer|Basic)\s+[^\s'\"]+", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)
# Key shapes common enough to be caught wherever they appear (OpenAI, Anthropic, Hugging Face, GitHub, AWS).
_KEY_SHAPES = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{8,}|hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{8,}|AKIA[A-Z0-9]{12,})")


# Challenges name a scheme and a realm for the client to answer, never a credential.
_CHALLENGES = frozenset({"www-authenticate", "proxy-authenticate"})


def is_secret_header(name: str) -> bool:
    return bool(_SECRET_NAME.search(name)) and name.lower() not in _CHALLENGES


def scrub_header_value(name: str, value: str) -> str:
    """A header's value with what looks like a credential replaced: a ``Bearer``/``Basic`` token,
    a URL's user:password, a well-known key shape. A challenge keeps its ``Bearer realm=...``."""
    if name.lower() in _CHALLENGES:
        return _KEY_SHAPES.sub(REDACTED, _URL_USERINFO.sub(rf"\1{REDACTED}@", value))
    return scrub_text(value)


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``http://user:pw@host:1/x`` -> (``http://host:1/x``, "user", "pw"); other URLs unchanged."""
    parsed = URL(url)
    if parsed.user is None and parsed.password is None:
        return url, None, None
    return str(parsed.with_user(None)), parsed.user, parsed.password


def scrub_text(text: str) -> str:
    """URL passwords and well-known key shapes replaced, wherever they appear in ``text``."""
    text = _URL_USERINFO.sub(rf"\1{REDACTED}@", text)
    return _KEY_SHAPES.sub(REDACTED, _BEARER.sub(rf"\1 {REDACTED}", text))


def scrub_command(command: str | None) -> str | None:
    """A command line with every credential in it replaced by REDACTED."""
    if command is None:
        return None
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: keep only what cannot be a secret
        return scrub_text(command)
    scrubbed, hide_next = [], False
    for word in words:
        if hide_next:
            scrubbed.append(REDACTED)
            hide_next = False
            continue
        option = _SECRET_OPTION.match(word)
        assignment = _SECRET_ASSIGNMENT.match(word)
        header = _SECRET_HEADER_LINE.match(word)
        if option and option.group(2):
            scrubbed.append(f"{option.group(1)}={REDACTED}")
        elif option:
            scrubbed.append(word)
            hide_next = True
        elif assignment:
            scrubbed.append(f"{assignment.group(1)}={REDACTED}")
        elif header:
            scrubbed.append(f"{header.group(1)}: {REDACTED}")
        else:
            scrubbed.append(scrub_text(word))
    return shlex.join(scrubbed)
