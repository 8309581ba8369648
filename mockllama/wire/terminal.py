"""Text from untrusted places (cassette file names, recorded values) made safe to print.

A file name may hold terminal escape sequences (ESC [ ... ) that recolour, retitle or rewrite
the user's terminal when printed raw; every control character is shown as an escape instead.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """``text`` with control and bidi-override characters written as \\xNN or \\uNNNN."""

    def escape(match: re.Match) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROL.sub(escape, str(text))
