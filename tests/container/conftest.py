"""The container tier: mockllama's image (Containerfile), built with podman and run.

Set MOCKLLAMA_CONTAINER=0 to skip it. Otherwise a missing podman, mmdebstrap or runc fails the
tests; it never skips them (scripts/test installs them from Debian's packages as root).

No container registry is reachable from these machines, so the image is built FROM a base made
from Debian's packages: `mmdebstrap` a minimal bookworm with python3, then `podman import` it,
reused while its recipe stays the same (containerkit.BASE_IMAGE). The wheels are made on the host
(`pip wheel -c constraints/image.txt`: mockllama and its dependencies at the pinned versions, for
the host's Python, which is bookworm's 3.11 too) and installed in the image with PIP_NO_INDEX=1,
so the build downloads nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from containerkit import BASE_IMAGE, BASE_RECIPE, CONTAINERS_CONF, REPORT, TOOLS, Container, Containers, Podman

from support import ROOT
from support.image_constraints import CONSTRAINTS


def pytest_terminal_summary(terminalreporter) -> None:
    if REPORT.lines:
        terminalreporter.section("container tier")
        for line in REPORT.lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def podman(tmp_path_factory) -> Podman:
    if os.environ.get("MOCKLLAMA_CONTAINER") == "0":
        pytest.skip("MOCKLLAMA_CONTAINER=0: the container image tier is switched off")
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(
            f"the container tier needs {', '.join(missing)}: apt-get install {' '.join(TOOLS)} "
            "(or set MOCKLLAMA_CONTAINER=0)"
        )
    conf = tmp_path_factory.mktemp("podman") / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    return Podman({**os.environ, "CONTAINERS_CONF": str(conf)})


@pytest.fixture(scope="session")
def base_image(podman, tmp_path_factory) -> str:
    """The base, from Debian's packages: built once per recipe, then reused."""
    if podman.image_exists(BASE_IMAGE):
        REPORT.add(f"base {BASE_IMAGE} reused")
        return BASE_IMAGE
    started = time.monotonic()
    tarball = tmp_path_factory.mktemp("base") / "base.tar"
    result = subprocess.run(
        ["mmdebstrap", "--quiet", *BASE_RECIPE, str(tarball)], capture_output=True, text=True, timeout=1800
    )
    if result.returncode != 0:
        pytest.fail(f"mmdebstrap failed ({result.returncode}):\n{result.stderr[-4000:]}")
    podman("import", str(tarball), BASE_IMAGE)
    tarball.unlink()
    REPORT.add(f"base {BASE_IMAGE} built in {time.monotonic() - started:.0f} s")
    return BASE_IMAGE


@pytest.fixture(scope="session")
def build_context(tmp_path_factory) -> Path:
    """A build context as the Containerfile wants it: the wheels in dist/, made with the pins the
    image installs, and the file of those pins."""
    started = time.monotonic()
    context = tmp_path_factory.mktemp("context")
    pinned = context / CONSTRAINTS.relative_to(ROOT)
    pinned.parent.mkdir()
    shutil.copyfile(CONSTRAINTS, pinned)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--constraint", str(pinned)]
        + ["--wheel-dir", str(context / "dist"), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode != 0:
        pytest.fail(f"pip wheel failed ({result.returncode}):\n{result.stderr[-4000:]}")
    REPORT.add(f"wheels made in {time.monotonic() - started:.0f} s")
    return context


@pytest.fixture(scope="session")
def image(podman, base_image, build_context) -> str:
    """mockllama's image, built from the Containerfile with nothing downloaded; removed after the run."""
    name = f"localhost/mockllama-test:{uuid.uuid4().hex[:12]}"
    started = time.monotonic()
    podman(
        "build",
        "--format=docker",  # the OCI format has no HEALTHCHECK
        "--layers=false",  # no intermediate images left behind by each run
        "--network=none",
        f"--build-arg=BASE={base_image}",
        "--build-arg=PIP_NO_INDEX=1",
        f"--file={ROOT / 'Containerfile'}",
        f"--tag={name}",
        str(build_context),
    )
    REPORT.add(f"image built in {time.monotonic() - started:.0f} s")
    yield name
    podman("rmi", "--force", name, check=False)


@pytest.fixture(scope="module")
def served(podman, image) -> Container:
    """The image as a user runs it first: its default command, nothing mounted."""
    containers = Containers(podman, image)
    yield containers.start()
    containers.remove_all()


@pytest.fixture
def start_container(podman, image):
    """``start_container(*podman_run_options, command=(...))``: containers of a test's own."""
    containers = Containers(podman, image)
    yield containers.start
    containers.remove_all()
