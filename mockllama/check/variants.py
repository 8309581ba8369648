"""Naming the variant: which known servers' way of reporting a cut a reply carries, read off the
signals each server's behaviour declares (``behaviours/variants/``)."""

from __future__ import annotations

from typing import cast

from mockllama.behaviours.variants import VARIANTS as DECLARED_VARIANTS
from mockllama.behaviours.variants.signals import (
    ABSENT,
    CALLS_WITH_A_DELTA,
    EVERY_CALL,
    SET,
    Ending,
    Variant,
)
from mockllama.check.reading import Seen, _event_names

# The servers whose way of reporting a reply's end is known, each declared once beside its
# behaviour (mockllama/behaviours/variants/, citing that server's source). A probe names those whose
# signals its cut reply carries, every one of them: on one probe, two servers may look the same.
VARIANTS = DECLARED_VARIANTS


def _says(value, declared) -> bool:
    """Whether a field's value (ABSENT when the key is missing) is what a declaration says."""
    if declared is SET:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return value is declared if declared is ABSENT or value is ABSENT else value == declared


def fits(variant: Variant, seen: Seen) -> bool:
    """Whether a cut reply carries exactly the signals ``variant``'s server writes for one."""
    stream = seen.terminal is not None
    ending = cast(Ending, (variant.stream if stream else variant.body).cut)  # a Both of Ending
    response = seen.response
    if not all(
        _says(response.get(key, ABSENT), declared)
        for key, declared in (
            ("status", ending.status),
            ("incomplete_details", ending.incomplete_details),
            ("completed_at", ending.completed_at),
        )
    ):
        return False
    output = response.get("output") or []
    cut = output[-1] if output else {}
    if cut.get("type") in ending.items and not _says(cut.get("status", ABSENT), ending.items[cut["type"]]):
        return False
    if seen.terminal is None:  # not a stream
        return True
    if len(seen.terminals) != 1 or _event_names(seen.terminal) != {variant.terminal.cut}:
        return False
    if cut.get("type") == "function_call" and variant.arguments_done != CALLS_WITH_A_DELTA:
        return (cut.get("id") in seen.arguments_done) is (variant.arguments_done == EVERY_CALL)
    return True
