"""The test suite's own guards: what would let a tier, a parameter or a behaviour silently vanish."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mockllama.behaviours.registry import BEHAVIOURS
from mockllama.behaviours.variants import SERVERS
from mockllama.pytest_plugin.session import base_url_behaviours, variant_url_behaviours
from support.docs_pages import README, blocks

ROOT = Path(__file__).resolve().parents[1]
pytest_plugins = ["pytester"]

PLUGIN_PARAMS_TEST = """
import os

def test_records_its_behaviour(FIXTURE, mockllama):
    behaviour = FIXTURE.removeprefix(mockllama.url).split("/")[1]
    with open(os.environ["SEEN_FILE"], "a") as seen:
        seen.write(behaviour + "\\n")
"""


@pytest.mark.parametrize(
    "fixture, behaviours",
    [("mockllama_base_url", base_url_behaviours()), ("mockllama_variant_url", variant_url_behaviours())],
)
def test_the_plugin_runs_a_url_test_once_per_behaviour_of_its_fixture(pytester, monkeypatch, fixture, behaviours):
    seen = pytester.path / "seen.txt"
    monkeypatch.setenv("SEEN_FILE", str(seen))
    pytester.makepyfile(test_inner=PLUGIN_PARAMS_TEST.replace("FIXTURE", fixture))
    collected = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    assert [line for line in collected.outlines if "::" in line] == [
        f"test_inner.py::test_records_its_behaviour[{b}]" for b in behaviours
    ]
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(behaviours))
    assert seen.read_text().split() == behaviours


def test_no_behaviour_and_no_variant_vanishes_from_the_fixtures():
    assert list(BEHAVIOURS)[:3] == ["buggy", "fixed", "spec"]  # none of the three may vanish; others may join
    assert base_url_behaviours()[:3] == ["buggy", "fixed", "spec"]
    every_server = {variant.name for variant in SERVERS} | {"fixed", "spec"}
    assert sorted(variant_url_behaviours()) == sorted(every_server) and len(every_server) == 11


def test_an_empty_parameter_list_fails_at_collection(tmp_path):
    """pyproject.toml sets empty_parameter_set_mark = fail_at_collect: no test skips for want of cases."""
    (tmp_path / "test_empty.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('case', [])\ndef test_nothing(case):\n    pass\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            str(tmp_path / "test_empty.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode != 0, result.stdout
    assert "Empty parameter set" in result.stdout


# The real commands the two scripts and the fakes below use; nothing else of the machine is on PATH.
REAL_TOOLS = ("bash", "sh", "dirname", "rm", "mkdir", "mktemp", "env", "grep", "sort", "sed", "cat")
# `python3 -m venv DIR` makes a venv whose activate script does nothing; every other call is logged,
# and pytest writes down the tier switches it would see.
FAKE_PYTHON = """#!/bin/sh
echo "python $*" >> "$LOG"
case "$2" in
  venv) for dir; do :; done; mkdir -p "$dir/bin" && : > "$dir/bin/activate" ;;
  pytest) env | grep "^MOCKLLAMA_" | sort > "$SEEN" ;;
esac
"""


def machine(tmp_path, *, root: bool, have: tuple[str, ...], broken: tuple[str, ...] = ()) -> dict:
    """A PATH with the real basics, a fake Python, `id -u`, a logging apt-get and npm, and ``have``:
    commands that run (``broken`` ones exit 1, as a node that is there but does not run)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in REAL_TOOLS:
        (bin_dir / name).symlink_to(shutil.which(name))
    fakes = {
        "python3": FAKE_PYTHON,
        "python": FAKE_PYTHON,
        "id": f"#!/bin/sh\necho {0 if root else 1000}\n",
        "apt-get": '#!/bin/sh\necho "apt-get $*" >> "$LOG"\n',
    }
    fakes.update({name: "#!/bin/sh\nexit 0\n" for name in have})
    fakes.update({name: "#!/bin/sh\nexit 1\n" for name in broken})
    if "npm" in have:
        fakes["npm"] = '#!/bin/sh\n[ "$1" = --version ] || echo "npm $*" >> "$LOG"\n'
    for name, body in fakes.items():
        tool = bin_dir / name
        tool.write_text(body)
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return {
        "PATH": str(bin_dir),
        "LOG": str(tmp_path / "log.txt"),
        "SEEN": str(tmp_path / "seen.txt"),
        "HOME": os.environ.get("HOME", "/"),
    }


def checkout(tmp_path) -> Path:
    """A copy of the two scripts in a repository of their own: `pip install .` there is the fake's."""
    repo = tmp_path / "repo"
    for script in (".ci/run", "scripts/test"):
        (repo / script).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / script, repo / script)
    return repo


def log(env: dict) -> list[str]:
    path = Path(env["LOG"])
    return path.read_text().splitlines() if path.exists() else []


CONTAINER_TOOLS = ("podman", "mmdebstrap", "runc", "slirp4netns")
CLIENT_TOOLS = ("unshare", "ip")
EVERYTHING = (
    "curl",
    "chromium",
    "wrk",
    "valgrind",
    "patch",
    "c++",
    "ccache",
    "node",
    "npm",
    *CONTAINER_TOOLS,
    *CLIENT_TOOLS,
)
TIERS_OFF = {
    "MOCKLLAMA_LIVE": "0",
    "MOCKLLAMA_BROWSER": "0",
    "MOCKLLAMA_BENCH": "0",
    "MOCKLLAMA_CONTAINER": "0",
    "MOCKLLAMA_CLIENTS": "0",
}
EVERY_TIER = [
    "python -m pip install .[test,docs,clients]",
    "python -m benchmarks --install-peers",
    "npm ci --prefix tests/claude-code --ignore-scripts",
]


def test_ci_runs_every_tier_whatever_the_machine_has_set(tmp_path):
    """.ci/run unsets every tier switch (MOCKLLAMA_LIVE, _BROWSER, _BENCH, _CONTAINER, _CLIENTS), then runs
    scripts/test; and MOCKLLAMA_CLIENTS_NEWEST, so CI runs the pinned clients alone."""
    env = machine(tmp_path, root=True, have=EVERYTHING)
    env.update({"MOCKLLAMA_CI_VENV": str(tmp_path / "venv"), **TIERS_OFF, "MOCKLLAMA_CLIENTS_NEWEST": "1"})
    result = subprocess.run(
        ["bash", str(checkout(tmp_path) / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert Path(env["SEEN"]).read_text().split() == [f"MOCKLLAMA_CI_VENV={tmp_path / 'venv'}"]
    assert log(env) == [
        f"python -m venv --clear {tmp_path / 'venv'}",
        "python -m pip install --quiet --upgrade pip",
        *EVERY_TIER,
        "python -m pytest",
    ]


def test_the_test_command_installs_nothing_on_a_machine_that_has_it_all(tmp_path):
    env = machine(tmp_path, root=True, have=EVERYTHING)
    result = subprocess.run(
        [str(checkout(tmp_path) / "scripts" / "test"), "-q", "tests/x.py"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert log(env) == [*EVERY_TIER, "python -m pytest -q tests/x.py"]


def test_as_root_it_installs_only_the_missing_packages_and_never_a_node_that_runs(tmp_path):
    """This machine's kind: NodeSource's node and npm run; chromium and wrk are missing."""
    env = machine(
        tmp_path,
        root=True,
        have=("curl", "valgrind", "patch", "c++", "ccache", "node", "npm", *CONTAINER_TOOLS, *CLIENT_TOOLS),
    )
    result = subprocess.run(
        [str(checkout(tmp_path) / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert log(env)[:3] == [
        "apt-get update -qq",
        "apt-get install -y -qq chromium wrk",
        "python -m pip install .[test,docs,clients]",
    ]
    assert log(env)[-1] == "python -m pytest"


def test_a_node_or_npm_that_does_not_run_counts_as_missing(tmp_path):
    env = machine(
        tmp_path,
        root=True,
        have=("curl", "chromium", "wrk", "valgrind", "patch", "c++", "ccache", *CONTAINER_TOOLS, *CLIENT_TOOLS),
        broken=("node",),
    )
    subprocess.run([str(checkout(tmp_path) / "scripts" / "test")], env=env, capture_output=True, timeout=60)
    assert "apt-get install -y -qq nodejs npm" in log(env)


def test_as_root_it_installs_the_container_tiers_tools_when_they_are_missing(tmp_path):
    env = machine(
        tmp_path, root=True, have=("curl", "chromium", "wrk", "valgrind", "patch", "c++", "ccache", "node", "npm")
    )
    result = subprocess.run(
        [str(checkout(tmp_path) / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "apt-get install -y -qq podman mmdebstrap runc slirp4netns util-linux iproute2" in log(env)


def test_not_root_it_names_the_apt_get_line_and_the_switches(tmp_path):
    env = machine(tmp_path, root=False, have=("curl", "valgrind", "patch", "c++", "ccache", "node", "npm"))
    result = subprocess.run(
        [str(checkout(tmp_path) / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert (
        "apt-get update && apt-get install -y chromium wrk podman mmdebstrap runc slirp4netns util-linux iproute2\n"
        in result.stderr
    )
    for switch in TIERS_OFF:
        assert f"{switch}=0" in result.stderr
    assert log(env) == []  # nothing installed, nothing run


def test_with_the_tiers_switched_off_it_needs_none_of_their_packages(tmp_path):
    env = machine(tmp_path, root=False, have=("curl",))
    env.update(TIERS_OFF)
    result = subprocess.run(
        [str(checkout(tmp_path) / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert log(env) == ["python -m pip install .[test,docs]", "python -m pytest"]


def test_it_installs_the_typescript_clients_when_their_lockfile_is_there(tmp_path):
    repo = checkout(tmp_path)
    (repo / "tests" / "js").mkdir(parents=True)
    (repo / "tests" / "js" / "package-lock.json").write_text("{}")
    env = machine(tmp_path, root=False, have=("curl", "node", "npm"))
    env.update(TIERS_OFF)
    result = subprocess.run([str(repo / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert log(env) == ["python -m pip install .[test,docs]", "npm ci --prefix tests/js", "python -m pytest"]


def test_with_only_the_client_tier_switched_off_it_installs_no_client(tmp_path):
    env = machine(tmp_path, root=False, have=EVERYTHING)
    env["MOCKLLAMA_CLIENTS"] = "0"
    result = subprocess.run(
        [str(checkout(tmp_path) / "scripts" / "test")], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert log(env) == [
        "python -m pip install .[test,docs]",
        "python -m benchmarks --install-peers",
        "python -m pytest",
    ]


def test_the_test_command_says_what_it_does():
    result = subprocess.run([str(ROOT / "scripts" / "test"), "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for promise in (
        "MOCKLLAMA_LIVE=0",
        "MOCKLLAMA_BROWSER=0",
        "MOCKLLAMA_BENCH=0",
        "MOCKLLAMA_CONTAINER=0",
        "MOCKLLAMA_CLIENTS=0",
        "MOCKLLAMA_CLIENTS_NEWEST=1",
        "--install-peers",
        "npm ci --prefix tests/js",
        "npm ci --prefix tests/claude-code --ignore-scripts",
        'pip install ".[test,docs,clients]"',
        '".[test,docs]" without it',
        "node --version",
    ):
        assert promise in result.stdout, promise


def test_ci_ends_with_the_test_command_the_readme_shows():
    """So the two cannot drift: README's set-up shows `scripts/test`, and .ci/run ends by running it."""
    shown = [block.source.strip() for block in blocks(README) if block.source.strip().endswith("scripts/test")]
    assert shown[0] == "scripts/test"
    assert (ROOT / ".ci" / "run").read_text().rstrip().splitlines()[-1] == shown[0]


# Issue 47 item 13: .ci/run runs as root, so the virtualenv it replaces is never a path it did not make


def _ci(tmp_path, **env_vars) -> tuple[subprocess.CompletedProcess, dict]:
    env = machine(tmp_path, root=True, have=EVERYTHING)
    env.update({"TMPDIR": str(tmp_path / "tmp"), **env_vars})
    (tmp_path / "tmp").mkdir()
    result = subprocess.run(
        ["bash", str(checkout(tmp_path) / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60
    )
    return result, env


def test_ci_makes_its_virtualenv_with_mktemp_and_removes_it_at_the_end(tmp_path):
    result, env = _ci(tmp_path)
    assert result.returncode == 0, result.stderr
    made = log(env)[0].removeprefix("python -m venv ")
    assert Path(made).parent == tmp_path / "tmp" and Path(made).name.startswith("mockllama-ci-venv.")
    assert Path(made).name != "mockllama-ci-venv.XXXXXXXX" and log(env)[-1] == "python -m pytest"
    assert list((tmp_path / "tmp").iterdir()) == []  # gone once the run is over


def test_ci_refuses_a_directory_it_did_not_make_and_leaves_it_as_it_is(tmp_path):
    precious = tmp_path / "precious"
    (precious / "src").mkdir(parents=True)
    (precious / "src" / "work.txt").write_text("keep me")
    (precious / "pyvenv.cfg").write_text("home = /usr/bin\n")  # even a virtualenv, if .ci/run did not make it
    result, env = _ci(tmp_path, MOCKLLAMA_CI_VENV=str(precious))
    assert result.returncode == 2
    assert f"MOCKLLAMA_CI_VENV={precious}" in result.stderr and "left as it is" in result.stderr
    assert (precious / "src" / "work.txt").read_text() == "keep me" and log(env) == []


def test_ci_refuses_a_path_that_is_not_a_directory(tmp_path):
    planted = tmp_path / "file"
    planted.write_text("keep me")
    result, env = _ci(tmp_path, MOCKLLAMA_CI_VENV=str(planted))
    assert result.returncode == 2 and planted.read_text() == "keep me" and log(env) == []


def test_ci_reuses_a_new_or_empty_directory_and_one_it_made_before(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    for run in ("first", "second"):  # empty, then the virtualenv the first run made (its marker in it)
        (tmp_path / run).mkdir()
        result, env = _ci(tmp_path / run, MOCKLLAMA_CI_VENV=str(venv))
        assert result.returncode == 0, result.stderr
        assert log(env)[0] == f"python -m venv --clear {venv}"
        assert (venv / ".mockllama-ci-venv").exists()
