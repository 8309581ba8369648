"""The README's examples for matching and conversations are run, and their printed output checked.

Each ```python block in those sections ends with the lines it prints, as `# ` comments; the
block runs against a mockllama on a free port (the README says 127.0.0.1:18090).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

import pytest
from httpkit import post_json

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
SECTIONS = ("## Choosing the scenario", "## Which requests match", "## Conversations")


def _section(title: str) -> str:
    start = README.index(title)
    end = README.find("\n## ", start + len(title))
    return README[start:end if end != -1 else None]


def _python_blocks() -> list[str]:
    return [block for title in SECTIONS for block in re.findall(r"```python\n(.*?)```", _section(title), re.S)]


def _printed(block: str) -> list[str]:
    lines = block.rstrip("\n").splitlines()
    expected = []
    while lines and lines[-1].startswith("# "):
        expected.insert(0, lines.pop()[2:])
    return expected


def test_the_sections_have_examples_that_say_what_they_print():
    blocks = _python_blocks()
    assert len(blocks) >= 2 and all(_printed(block) for block in blocks)


@pytest.mark.parametrize("number", range(len(_python_blocks())))
def test_readme_example_prints_what_the_readme_says(server, number):
    block = _python_blocks()[number]
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(block.replace("http://127.0.0.1:18090", server.url), f"README block {number}", "exec"), {})
    assert output.getvalue().splitlines() == _printed(block)


def test_the_no_match_message_is_the_one_the_readme_shows(server):
    section = _section("## Choosing the scenario")
    sent = json.loads(re.search(r"For\n`(\{.*?\})`", section, re.S).group(1))
    shown = re.search(r"```\n(mockllama: no recording.*?)```", section, re.S).group(1)
    status, _, body = post_json(server.url, "/v1/responses", sent)
    assert status == 404
    assert json.loads(body)["error"]["message"] == " ".join(shown.split())
