"""Helpers for the container tier: podman with the tier's settings, the base image's recipe, and
containers of the image on free loopback ports."""

from __future__ import annotations

import hashlib
import http.client
import json
import socket
import subprocess
import sys
import uuid
from dataclasses import dataclass, field

import pytest

from support.waiting import wait_for

# podman on these machines: runc, since crun fails on the hybrid cgroups; and no default ulimits,
# since podman's raise the limits past the sandbox's and the container fails to start. A file of
# the tier's own, named by CONTAINERS_CONF: the machine's podman settings stay as they are.
CONTAINERS_CONF = '[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n'

# The base image: what the Containerfile's BASE needs (python3 with venv; useradd), and no docs.
BASE_RECIPE = (
    "--variant=apt",
    "--include=python3,python3-venv,passwd",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    "bookworm",
)
# Tagged with a key of its recipe: a run reuses the base a run before it built, until the recipe changes.
BASE_IMAGE = "localhost/mockllama-base:bookworm-" + hashlib.sha256(json.dumps(BASE_RECIPE).encode()).hexdigest()[:12]

# Each container has a user-mode network of its own (slirp4netns): its published port listens on
# the host's loopback, and with allow_host_loopback it reaches the host's loopback at 10.0.2.2,
# an address that exists only inside the container's own network namespace. No bridge, so no
# traffic leaves the host's loopback.
NETWORK = "slirp4netns:allow_host_loopback=true"
HOST_FROM_CONTAINER = "10.0.2.2"
PORT = 18090  # the image's default command serves here
USER_ID = 10001  # the Containerfile's user

TOOLS = ("podman", "mmdebstrap", "runc")


@dataclass
class Report:
    """What the tier measured: printed as it goes (seen with -s) and at the end of the run."""

    lines: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        self.lines.append(line)
        print(f"\ncontainer tier: {line}", file=sys.stderr)


REPORT = Report()


@dataclass
class Podman:
    """podman, with the tier's containers.conf."""

    env: dict

    def __call__(self, *args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(["podman", *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            pytest.fail(f"podman {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-4000:]}")
        return result

    def image_exists(self, name: str) -> bool:
        return self("image", "exists", name, check=False).returncode == 0


@dataclass
class Container:
    name: str
    url: str
    podman: Podman

    def logs(self) -> str:
        result = self.podman("logs", self.name, check=False)
        return result.stdout + result.stderr

    def inspect(self, template: str) -> str:
        return self.podman("container", "inspect", f"--format={template}", self.name).stdout.strip()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(port: int) -> bool:
    """Whether mockllama answers HTTP on the published port. The port accepts connections before
    mockllama listens inside (and then resets them): only a reply says it is up."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", "/health")
        connection.getresponse().read()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


class Containers:
    """Containers of one image on free loopback ports, removed together."""

    def __init__(self, podman: Podman, image: str):
        self.podman = podman
        self.image = image
        self.started: list[Container] = []

    def start(self, *options: str, command: tuple[str, ...] = ()) -> Container:
        """``podman run`` with these options (volumes, ...) and this command (default: the image's);
        returns once mockllama answers, or fails the test with the container's output."""
        port = free_port()
        name = f"mockllama-test-{uuid.uuid4().hex[:12]}"
        self.podman(
            "run",
            "--detach",
            f"--name={name}",
            f"--network={NETWORK}",
            f"--publish=127.0.0.1:{port}:{PORT}",
            *options,
            self.image,
            *command,
        )
        container = Container(name, f"http://127.0.0.1:{port}", self.podman)
        self.started.append(container)
        if not wait_for(lambda: answers(port), seconds=60, interval=0.1):
            pytest.fail(f"the container did not answer on {container.url} within 60 s:\n{container.logs()[-4000:]}")
        return container

    def remove_all(self) -> None:
        for container in self.started:
            self.podman("rm", "--force", "--time=0", container.name, check=False)
