"""--install-peers installs exactly the tree benchmarks/npm/package-lock.json pins, with no package's
install scripts run: `npm ci --ignore-scripts`, never a floating `npm install`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

from benchmarks.harness import CHECKOUT
from benchmarks.peers import NPM_PROJECT, PEERS

# A stand-in for npm: it writes its arguments and the files it found in --prefix, and installs nothing.
FAKE_NPM = """#!/bin/sh
prefix=""
previous=""
for arg in "$@"; do
  [ "$previous" = "--prefix" ] && prefix="$arg"
  previous="$arg"
done
echo "$*" > "$NPM_LOG"
ls "$prefix" >> "$NPM_LOG"
"""


def test_install_peers_runs_npm_ci_without_scripts_on_the_committed_lockfile(tmp_path):
    bin_dir, peers = tmp_path / "bin", tmp_path / "peers"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "MOCKLLAMA_PEERS_DIR": str(peers),
        "NPM_LOG": str(tmp_path / "npm.log"),
    }
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--install-peers"],
        cwd=CHECKOUT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    command, *present = (tmp_path / "npm.log").read_text().splitlines()
    assert command == f"ci --ignore-scripts --no-audit --no-fund --prefix {peers}"
    assert present == ["package-lock.json", "package.json"]
    for name in present:
        assert (peers / name).read_bytes() == (NPM_PROJECT / name).read_bytes()


def test_the_lockfile_pins_every_peer_at_the_version_package_json_names():
    manifest = json.loads((NPM_PROJECT / "package.json").read_text())
    lock = json.loads((NPM_PROJECT / "package-lock.json").read_text())
    assert sorted(manifest["dependencies"]) == sorted(peer.package for peer in PEERS)
    assert lock["packages"][""]["dependencies"] == manifest["dependencies"]
    for package, version in manifest["dependencies"].items():
        assert lock["packages"][f"node_modules/{package}"]["version"] == version  # exact, not a range


def test_no_package_in_the_peers_tree_has_an_install_script():
    """--ignore-scripts leaves nothing undone; a peer that needs one must be named and allowed alone."""
    lock = json.loads((NPM_PROJECT / "package-lock.json").read_text())
    with_scripts = [path for path, package in lock["packages"].items() if package.get("hasInstallScript")]
    assert with_scripts == []
