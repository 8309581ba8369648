"""What the tests share: HTTP helpers, the bundled recordings, servers that observe, test
doubles of other servers. Imported as ``support.NAME`` (tests/ is on the path through its conftest)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout
