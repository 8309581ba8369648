"""The container's example files agree with the Containerfile and docs/container.md: the compose
file and the GitHub Actions job name the image, its port and its volumes as the page does, and
the page shows each file as it is. They read files only, so they run with MOCKLLAMA_CONTAINER=0
too."""

from __future__ import annotations

import re

import yaml

from support import ROOT, containerfile
from support.docs_pages import DOCS, blocks

PAGE = DOCS / "container.md"
CONTAINERFILE = containerfile.text()
COMPOSE = ROOT / "examples" / "compose.yaml"
GITHUB_ACTIONS = ROOT / "examples" / "github-actions.yml"


def exposed_port() -> int:
    [port] = re.findall(r"^EXPOSE (\d+)$", CONTAINERFILE, re.MULTILINE)
    return int(port)


def mounts(service: dict) -> dict[str, str]:
    """{target in the container: the whole volume line} of a compose service."""
    return {volume.split(":")[1]: volume for volume in service["volumes"]}


def test_the_page_shows_each_example_file_as_it_is():
    included = {block.include: block.source for block in blocks(PAGE) if block.include}
    assert set(included) == {"examples/compose.yaml", "examples/github-actions.yml"}
    for path, shown in included.items():
        assert shown == (ROOT / path).read_text(), path


def test_the_containerfile_has_the_port_the_volume_and_the_mount_the_page_names():
    page = PAGE.read_text()
    assert f"| the port | {exposed_port()} " in page
    assert re.search(r"^VOLUME /record$", CONTAINERFILE, re.MULTILINE)
    assert "| recordings made with `--upstream` | the volume `/record` " in page
    assert "[ -d /recordings ]" in CONTAINERFILE and "--cassettes /recordings" in CONTAINERFILE
    assert "| your recordings | a directory mounted at `/recordings`, read-only" in page


def test_the_compose_file_serves_the_image_on_its_port_and_records_into_its_volume():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    replay, recorder = services["mockllama"], services["recorder"]
    assert replay["image"] == recorder["image"] == "mockllama"
    for service in (replay, recorder):
        [published] = service["ports"]
        assert published.startswith("127.0.0.1:") and published.endswith(f":{exposed_port()}")
    assert mounts(replay) == {"/recordings": "./recordings:/recordings:ro"}
    assert mounts(recorder) == {"/record": "./record:/record"}
    command = recorder["command"]
    assert command[:5] == ["serve", "--host", "0.0.0.0", "--port", str(exposed_port())]
    assert command[command.index("--record-to") + 1] == "/record" and "--upstream" in command
    assert recorder["profiles"] == ["record"]  # only when asked for: one recorder, never by default


def test_the_github_actions_job_runs_the_image_as_a_service_on_its_port():
    [job] = yaml.safe_load(GITHUB_ACTIONS.read_text())["jobs"].values()
    service = job["services"]["mockllama"]
    assert service["image"].rpartition(":")[0].endswith("/mockllama")
    assert service["ports"] == [f"127.0.0.1:{exposed_port()}:{exposed_port()}"]
    assert job["env"]["OPENAI_BASE_URL"] == f"http://127.0.0.1:{exposed_port()}/fixed/v1"


def test_the_image_installs_the_wheel_built_in_dist_by_its_path_never_by_its_name():
    """A bare `mockllama` with the index on takes the highest version anywhere: a newer release, or
    someone else's upload of the name, instead of dist/'s wheel."""
    words = containerfile.install_command()
    option_values = {i + 1 for i, word in enumerate(words) if word in ("--find-links", "--constraint", "-c")}
    requirements = [word for i, word in enumerate(words) if not word.startswith("-") and i not in option_values]
    assert requirements == ["/tmp/wheels/mockllama-*.whl"], words
    # Its dependencies come from dist/'s wheels too (and from the index unless PIP_NO_INDEX=1).
    assert containerfile.option_value(words, "--find-links") == "/tmp/wheels", words


def test_the_image_users_home_is_outside_the_record_volume():
    """mockllama keeps its cassette index under HOME: in /record it would land in the user's recordings."""
    [useradd] = [line for line in CONTAINERFILE.replace("\\\n", " ").splitlines() if "useradd" in line]
    home = re.search(r"--home-dir (\S+)", useradd)
    assert home, useradd
    volumes = re.findall(r"^VOLUME (\S+)$", CONTAINERFILE, re.MULTILINE)
    assert volumes and not any(home[1] == v or home[1].startswith(v.rstrip("/") + "/") for v in volumes), home[1]
    assert "--create-home" in useradd.split(), useradd  # the index can be written there


def test_every_port_the_page_publishes_is_on_127_0_0_1():
    """The page advises publishing on 127.0.0.1; a bare `-p 18090:18090` puts mockllama on every interface."""
    published = re.findall(r"(?:-p|--publish)[ =](\S*:\d+)\b", PAGE.read_text())
    assert published, "the page publishes no port: this test would prove nothing"
    assert all(port.startswith("127.0.0.1:") for port in published), published
