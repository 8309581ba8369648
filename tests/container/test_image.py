"""mockllama's container image, built from the Containerfile and run as docs/container.md shows.

tests/container/conftest.py builds the base, the wheels and the image (MOCKLLAMA_CONTAINER=0
skips this tier), and reports how long each took and how large the image is.
"""

from __future__ import annotations

import json
import shutil
import time

from containerkit import HOST_FROM_CONTAINER, PORT, REPORT, USER_ID
from packaging.utils import canonicalize_name

from mockllama.app import create_app
from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios
from mockllama.server.background import BackgroundServer
from support import ROOT
from support.httpkit import post_json
from support.image_constraints import CONSTRAINTS, needed, pins
from support.recordings import SCENARIOS
from support.waiting import wait_for

SEED = {"model": "x", "input": "Count from 1 to 200, separated by spaces.", "max_output_tokens": 8, "temperature": 0}
SHOW_VERSION = "import importlib.metadata as m; print(m.version('mockllama'))"
# What the image's virtualenv holds (pip is gone from it: importlib.metadata reads it instead).
SHOW_INSTALLED = (
    "import importlib.metadata as m, json, platform; print(json.dumps({'python': platform.python_version(), "
    "'installed': {d.metadata['Name']: [d.version, d.requires or []] for d in m.distributions()}}))"
)
SIZE_LIMIT_MB = 300  # the Debian base is 172 MB of it


def test_the_seed_request_is_completed_on_buggy_and_incomplete_on_fixed(served):
    statuses = {}
    for behaviour in ("buggy", "fixed"):
        code, _, body = post_json(served.url, f"/{behaviour}/v1/responses", SEED)
        assert code == 200, body
        statuses[behaviour] = json.loads(body)["status"]
    assert statuses == {"buggy": "completed", "fixed": "incomplete"}


def test_mockllama_is_pid_1_and_not_root(served):
    """PID 1 gets `stop`'s SIGTERM; a user other than root serves."""
    status = served.podman("exec", served.name, "cat", "/proc/1/status").stdout
    uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
    assert uids == [str(USER_ID)] * 4
    command = served.podman("exec", served.name, "cat", "/proc/1/cmdline").stdout.split("\0")
    assert command[1:4] == ["/opt/mockllama/bin/mockllama", "serve", "--host"], command


def test_the_user_has_a_writable_home_of_its_own_outside_the_record_volume(served):
    home = served.podman("exec", served.name, "sh", "-c", 'echo "$HOME" && test -w "$HOME"').stdout.split()
    assert home == ["/home/mockllama"], home


def test_the_mockllama_installed_is_the_wheel_built(served, build_context):
    """By its path, never a release of the same name from the package index."""
    [wheel] = (build_context / "dist").glob("mockllama-*.whl")
    shown = served.podman("exec", served.name, "/opt/mockllama/bin/python", "-c", SHOW_VERSION).stdout.strip()
    assert shown == wheel.name.split("-")[1], (shown, wheel.name)


def test_the_image_installs_the_pinned_version_of_everything_mockllama_needs(served, build_context):
    """constraints/image.txt's versions, and dist/'s wheels are those (pip wheel -c made them)."""
    shown = json.loads(served.podman("exec", served.name, "/opt/mockllama/bin/python", "-c", SHOW_INSTALLED).stdout)
    installed = {canonicalize_name(name): entry for name, entry in shown["installed"].items()}  # [version, requires]
    python = shown["python"]
    environment = {"python_version": python.rpartition(".")[0], "python_full_version": python}
    need = needed(installed["mockllama"][1], lambda name: installed.get(name, [None, None])[1], [environment])
    assert "aiohttp" in need and not set(need) - set(installed), (sorted(need), sorted(installed))
    versions = {name: installed[name][0] for name in need}
    pinned = pins()
    assert versions == {name: pinned.get(name) for name in need}, f"the image's versions differ from {CONSTRAINTS}"
    wheels = dict(wheel.name.split("-")[:2] for wheel in (build_context / "dist").glob("*.whl"))
    assert {canonicalize_name(name): version for name, version in wheels.items() if name != "mockllama"} == versions
    REPORT.add(f"image installs {len(versions)} pinned packages on Python {python}")


def test_the_health_check_says_healthy(served):
    checked = served.podman("healthcheck", "run", served.name, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_stop_ends_it_within_two_seconds_on_sigterm(start_container):
    container = start_container()
    started = time.monotonic()
    container.podman("stop", "--time=2", container.name)
    took = time.monotonic() - started
    REPORT.add(f"podman stop took {took:.2f} s")
    assert took < 2
    # 0, not 137: mockllama ended on SIGTERM; podman did not have to kill it.
    assert container.inspect("{{.State.ExitCode}}") == "0", container.logs()


def test_recordings_mounted_at_recordings_are_served_by_their_names(start_container, tmp_path):
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    seed = next(bundled_cassette_dir().rglob("text-cut-8.yaml"))
    shutil.copyfile(seed, recordings / "my-count.yaml")
    recordings.chmod(0o755)
    (recordings / "my-count.yaml").chmod(0o644)
    container = start_container(f"--volume={recordings}:/recordings:ro")

    code, headers, body = post_json(container.url, "/fixed/v1/responses", {**SEED, "model": "my-count"})
    assert code == 200, body
    assert headers["X-Mockllama-Scenario"] == "my-count"
    assert json.loads(body)["status"] == "incomplete"
    # They are the recordings served then, as with `serve --cassettes`: the bundled ones are not.
    code, _, body = post_json(container.url, "/v1/responses", SEED, {"X-Mockllama-Scenario": "text-cut-8"})
    assert code == 404 and b"no scenario named 'text-cut-8'" in body, body


def test_a_recording_made_inside_lands_in_the_record_volume(start_container, tmp_path):
    """serve --upstream, pointed at a test double of llama-server on the host (mockllama replaying
    the real llama-server recordings as they were sent), and --record-to the volume."""
    record = tmp_path / "record"
    record.mkdir()
    record.chmod(0o777)  # writable by the container's user
    with BackgroundServer(create_app(SCENARIOS)) as llama_server_double:
        upstream = f"http://{HOST_FROM_CONTAINER}:{llama_server_double.port}"
        container = start_container(
            f"--volume={record}:/record",
            command=tuple(f"serve --host 0.0.0.0 --port {PORT} --upstream {upstream} --record-to /record".split()),
        )
        code, headers, body = post_json(container.url, "/v1/responses", SEED)
        assert code == 200, body + container.logs().encode()
        assert json.loads(body)["status"] == "completed"
        # The readiness probe's GET /health was a miss too: it is recorded beside the seed.
        seed_cassette = record / f"{headers['X-Mockllama-Scenario']}.yaml"
        assert wait_for(seed_cassette.exists, seconds=30), container.logs()

    assert seed_cassette.stat().st_uid == USER_ID
    # The cassette index lives in the user's home, never among the recordings a user commits.
    assert not (record / ".cache").exists(), sorted(path.name for path in record.iterdir())
    scenario = load_scenarios([record])[seed_cassette.stem]
    assert scenario.find("POST", "/v1/responses", False).request_json["input"] == SEED["input"]
    assert (record / "provenance.json").is_file()


def test_the_image_is_small_and_holds_no_installer(podman, image):
    size = int(podman("image", "inspect", "--format={{.Size}}", image).stdout)
    REPORT.add(f"image size {size / 1e6:.0f} MB (on the Debian bookworm base; limit {SIZE_LIMIT_MB} MB)")
    assert size < SIZE_LIMIT_MB * 1e6
    pip = podman(
        "run",
        "--rm",
        "--network=none",
        "--entrypoint=/opt/mockllama/bin/python",
        image,
        "-c",
        "import pip",
        check=False,
    )
    assert pip.returncode != 0 and "No module named 'pip'" in pip.stderr, pip.stderr


def test_the_build_context_is_the_wheels_and_the_constraints_alone(podman, base_image, tmp_path):
    """.dockerignore (podman reads it too) sends the builder dist/'s wheels and constraints/image.txt,
    nothing else of the checkout."""
    listing = tmp_path / "Containerfile"
    listing.write_text(f'FROM {base_image}\nCOPY . /context\nCMD ["find", "/context", "-type", "f"]\n')
    name = f"localhost/mockllama-context:{tmp_path.name.lower()}"
    podman("build", "--layers=false", "--network=none", f"--file={listing}", f"--tag={name}", str(ROOT))
    try:
        sent = podman("run", "--rm", "--network=none", name).stdout.split()
    finally:
        podman("rmi", "--force", name, check=False)
    others = [path for path in sent if not (path.startswith("/context/dist/") and path.endswith(".whl"))]
    assert others == [f"/context/{CONSTRAINTS.relative_to(ROOT).as_posix()}"], sent
