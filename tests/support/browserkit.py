"""Headless Debian Chromium for the browser tests (MOCKLLAMA_BROWSER=0 switches them off)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def chromium() -> str:
    if os.environ.get("MOCKLLAMA_BROWSER") == "0":
        pytest.skip("MOCKLLAMA_BROWSER=0: the headless-browser test is switched off")
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("headless Chromium is needed: apt-get install chromium (or set MOCKLLAMA_BROWSER=0)")
    return found


def headless(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """One headless run with a fresh profile and no traffic of its own beyond what the page asks for."""
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=10000",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
