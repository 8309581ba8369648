"""Two builds of one commit make the same image: the Containerfile starts from an exact release of
its base and installs mockllama's dependencies at the versions constraints/image.txt pins, which
scripts/image-constraints makes from pyproject.toml. These read files and this interpreter's
installed metadata only, so they run offline, in every run; the container tier
(tests/container/test_image.py) checks the versions inside a built image.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
from collections import Counter

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from support import ROOT, containerfile
from support.docs_pages import DOCS
from support.image_constraints import CONSTRAINTS, REFRESH, needed, pin_lines, pins

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PAGE = DOCS / "container.md"


def runtime_dependencies() -> list[str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]


def installed_requires(name: str) -> list[str] | None:
    try:
        return importlib.metadata.requires(name) or []
    except importlib.metadata.PackageNotFoundError:
        return None


def test_the_constraints_pin_every_package_the_runtime_dependencies_need_once():
    """pyproject.toml's dependencies and, through what is installed here, everything they need on
    this Python: each has exactly one name==version line."""
    need = needed(runtime_dependencies(), installed_requires)
    assert {canonicalize_name(Requirement(d).name) for d in runtime_dependencies()} <= set(need), need
    not_here = sorted(name for name in need if installed_requires(name) is None)
    assert not not_here, f"needed, but not installed here, so what they need is unknown: {not_here}"
    lines = Counter(name for name, _ in pin_lines(CONSTRAINTS.read_text(encoding="utf-8")))
    unpinned = sorted(name for name in need if lines[name] == 0)
    twice = sorted(name for name, count in lines.items() if count > 1)
    assert not unpinned and not twice, f"not pinned: {unpinned}; pinned more than once: {twice} (run {REFRESH})"


def test_each_pin_is_a_version_pyproject_allows():
    pinned = pins()
    for dependency in map(Requirement, runtime_dependencies()):
        version = pinned[canonicalize_name(dependency.name)]
        assert dependency.specifier.contains(version, prereleases=True), (str(dependency), version)


def test_no_line_pins_mockllama_itself():
    """mockllama is dist/'s wheel, whatever its version: a pin would refuse the wheel just built."""
    assert "mockllama" not in pins()


def test_the_file_says_what_it_is_and_the_command_that_refreshes_it():
    header = CONSTRAINTS.read_text(encoding="utf-8").split("\n\n")[0]
    assert header.startswith("# The versions mockllama's container image installs"), header
    assert f"#     {REFRESH}\n" in CONSTRAINTS.read_text(encoding="utf-8")
    script = ROOT / REFRESH
    assert script.is_file() and os.access(script, os.X_OK), script
    assert REFRESH in PAGE.read_text(encoding="utf-8")


def test_the_containerfile_installs_with_the_constraints_file_and_the_build_context_holds_it():
    words = containerfile.install_command()
    in_image = containerfile.option_value(words, "--constraint", "-c")
    assert in_image, f"the install stage's pip install has no --constraint: {words}"
    copied = re.findall(r"^COPY (\S+) (\S+)$", containerfile.text(), re.MULTILINE)
    assert (CONSTRAINTS.relative_to(ROOT).as_posix(), in_image) in copied, copied
    # .dockerignore sends the builder nothing but what it lets in: the constraints file must be.
    allowed = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert f"!{CONSTRAINTS.relative_to(ROOT).as_posix()}" in allowed, allowed


def test_the_base_is_an_exact_python_and_debian_release_and_the_page_names_it():
    """A tag such as python:3.12-slim moves to each new Python patch release and Debian release."""
    base = containerfile.base_default()
    assert re.fullmatch(r"docker\.io/library/python:3\.\d+\.\d+-slim-[a-z]+", base), base
    page = PAGE.read_text(encoding="utf-8")
    [shown] = re.findall(r"^\| `BASE` \| `([^`]+)` \|", page, re.MULTILINE)
    assert shown == base, f"docs/container.md's table says {shown}, the Containerfile {base}"
    # The page's other mentions of an exact release (the digest example) are that one too.
    tag = base.rpartition(":")[2]
    named = re.findall(r"\b(3\.\d+\.\d+-slim-[a-z]+)", page)
    assert named and set(named) == {tag}, (named, tag)
