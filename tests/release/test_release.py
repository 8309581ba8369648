"""The release, as a maintainer would publish it: the sdist and the wheel built with `python -m
build`, checked with `twine check --strict`, the wheel holding what users run and nothing else,
and installed into a fresh virtualenv that serves the README's seed request from a directory
that is not the checkout.

The fresh venv has no pip of its own (`venv --without-pip`, no ensurepip): this test's pip installs
into it (`pip --python VENV`), the wheel and its dependencies from the index as `scripts/test`
installs the extras, so pip's cache makes a second run quick. Each run needs the index, as the test
command does; the whole file takes about 15 s, so it has no tier switch of its own.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path

import pytest

import mockllama
from support import ROOT
from support.docs_pages import README, blocks

VERSION = mockllama.__version__

# Every file the wheel may hold, as a pattern on its path inside the wheel. The benchmark is a
# development tool run from the checkout, never shipped.
WHEEL_HOLDS = {
    "the package's modules": r"mockllama/(?!bench/)(\w+/)*\w+\.py",
    "the bundled recordings": r"mockllama/_(bundled|patched)_cassettes/[\w./-]+\.(yaml|json|md)",
    "the scenario catalogues": r"mockllama/recordings/(catalogue|catalogues/[\w-]+)\.json",
    "the teaching page's files": r"mockllama/teaching/web/\w+\.(html|js|css)",
    "what the pytest plugin offers pytest": r"mockllama/pytest_plugin/offered\.json",
    "the typing marker": r"mockllama/py\.typed",
    "the metadata": rf"mockllama-{re.escape(VERSION)}\.dist-info/"
    r"(METADATA|WHEEL|RECORD|entry_points\.txt|licenses/LICENSE)",
}


def _run(command: list, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, (
        f"{' '.join(map(str, command))} exited {result.returncode}:\n{result.stdout}{result.stderr}"
    )
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The sdist and the wheel, as `python -m build` makes them: the wheel built from the sdist."""
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", out, ROOT])
    return out


@pytest.fixture(scope="module")
def wheel(dist) -> Path:
    return dist / f"mockllama-{VERSION}-py3-none-any.whl"


@pytest.fixture(scope="module")
def wheel_files(wheel) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return [name for name in archive.namelist() if not name.endswith("/")]


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory) -> Path:
    """A working directory that is not the checkout, nor inside it."""
    folder = tmp_path_factory.mktemp("elsewhere")
    assert ROOT not in folder.resolve().parents
    return folder


def _user_env() -> dict:
    """The environment without anything that would let the checkout's package be imported."""
    return {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONHOME")}


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel installed, and nothing else but its dependencies."""
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", wheel], env=_user_env())
    return venv


def test_both_artifacts_are_built_and_named_for_the_version(dist):
    assert sorted(path.name for path in dist.iterdir()) == [
        f"mockllama-{VERSION}-py3-none-any.whl",
        f"mockllama-{VERSION}.tar.gz",
    ]


def test_twine_check_strict_passes_on_the_sdist_and_the_wheel(dist):
    result = _run([sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir())])
    assert result.stdout.count("PASSED") == 2, result.stdout


def test_the_wheel_holds_what_users_run_and_nothing_else(wheel_files):
    unexpected = [name for name in wheel_files if not any(re.fullmatch(p, name) for p in WHEEL_HOLDS.values())]
    assert not unexpected, f"the wheel holds files no user runs: {unexpected}"


def test_the_wheel_holds_every_module_recording_and_catalogue_of_the_checkout(wheel_files):
    package = ROOT / "mockllama"
    expected = {
        path.relative_to(ROOT).as_posix()
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and "bench" not in path.relative_to(package).parts
    }
    for folder, inside in (("cassettes", "_bundled_cassettes"), ("cassettes-patched", "_patched_cassettes")):
        expected |= {
            f"mockllama/{inside}/{p.relative_to(ROOT / folder).as_posix()}" for p in (ROOT / folder).rglob("*.*")
        }
    missing = sorted(expected - set(wheel_files))
    assert not missing, f"the wheel lacks {missing}"
    for kind, pattern in WHEEL_HOLDS.items():
        if kind != "the typing marker":
            assert any(re.fullmatch(pattern, name) for name in wheel_files), f"the wheel has none of {kind}"


def test_the_wheel_carries_the_licence_and_the_entry_points(wheel):
    info = f"mockllama-{VERSION}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        licence = archive.read(f"{info}/licenses/LICENSE").decode()
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert licence == (ROOT / "LICENSE").read_text(encoding="utf-8") and licence.startswith("MIT License")
    assert "License-Expression: MIT" in metadata.splitlines()
    assert "mockllama = mockllama.cli:main" in entry_points and "[pytest11]" in entry_points


def test_the_sdist_holds_the_licence_the_changelog_the_containerfile_its_pins_and_the_tests(dist):
    with tarfile.open(dist / f"mockllama-{VERSION}.tar.gz") as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in (
        "LICENSE",
        "CHANGELOG.md",
        "README.md",
        "pyproject.toml",
        "Containerfile",
        "constraints/image.txt",  # the Containerfile installs with it
        "tests/release/test_release.py",
    ):
        assert needed in names, needed


def test_the_changelog_latest_release_is_the_package_version():
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert releases and releases[0][0] == VERSION, releases[:1]
    assert [version for version, _ in releases] == sorted(
        (version for version, _ in releases), key=lambda v: tuple(map(int, v.split("."))), reverse=True
    )


def test_the_docs_and_examples_name_the_version_being_released():
    """An image tag or a pin (`mockllama:X.Y.Z`, `mockllama==X.Y.Z`) in README.md, docs/ or
    examples/ names the package's own version; CHANGELOG.md keeps the history."""
    places = [README, *(ROOT / "docs").glob("*.md"), *(p for p in (ROOT / "examples").rglob("*") if p.is_file())]
    named = [
        (path.relative_to(ROOT).as_posix(), version)
        for path in places
        for version in re.findall(r"mockllama(?::|==)(\d+\.\d+\.\d+)\b", path.read_text(encoding="utf-8"))
    ]
    assert named, "no page names a version: this test would prove nothing"
    assert all(version == VERSION for _, version in named), [n for n in named if n[1] != VERSION]


def test_the_fresh_venv_imports_the_installed_package_not_the_checkout(venv, elsewhere):
    probe = (
        "import importlib.metadata as m, mockllama; print(mockllama.__file__); print(m.version('mockllama')); "
        "print(' '.join(e.name for e in m.entry_points(group='pytest11')))"
    )
    where, version, plugins = _run(
        [venv / "bin" / "python", "-c", probe], cwd=elsewhere, env=_user_env()
    ).stdout.splitlines()
    assert Path(where).is_relative_to(venv) and not Path(where).is_relative_to(ROOT), where
    assert version == VERSION and "mockllama" in plugins.split()
    shown = _run([venv / "bin" / "mockllama", "--version"], cwd=elsewhere, env=_user_env()).stdout
    assert shown.strip() == f"mockllama, version {VERSION}"


def _seed_request() -> dict:
    """The body the README's first example sends with curl, to /buggy and then to /fixed."""
    example = next(b for b in blocks(README) if b.language == "console" and "/buggy/v1/responses" in b.source)
    return json.loads(re.search(r"-d '(\{.*?\})'", example.source).group(1))


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.load(reply)


def test_the_installed_command_serves_the_seed_request_from_another_directory(venv, elsewhere):
    process = subprocess.Popen(
        [venv / "bin" / "mockllama", "serve", "--port", "0"],
        cwd=elsewhere,
        env=_user_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert select.select([process.stdout], [], [], 60)[0], "mockllama serve printed no URL within 60 s"
        url = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url), url
        seed = _seed_request()
        buggy = _post(f"{url}/buggy/v1/responses", seed)
        fixed = _post(f"{url}/fixed/v1/responses", seed)
    finally:
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=20)
    assert buggy["status"] == "completed" and buggy.get("incomplete_details") is None
    assert fixed["status"] == "incomplete" and fixed["incomplete_details"] == {"reason": "max_output_tokens"}
    assert process.returncode == 0 and "Traceback" not in errors, errors
