"""docs/upstream.md, "Recording your own client's traffic", run as written.

Offline, the upstream is mockllama replaying the bundled llama-server recordings (the page's
prompt is the bundled text-cut-8); tests/live/ runs the same page against a real llama-server.
"""

from __future__ import annotations

from mockllama.app import create_app
from mockllama.server.background import BackgroundServer
from support.docs_recording import run_section, section
from support.recordings import SCENARIOS


def test_the_page_shows_the_two_commands_and_an_example():
    commands, example, promised = section()
    assert commands == [
        "mockllama serve --upstream http://127.0.0.1:8080 --record-to my-cassettes",
        "mockllama serve --cassettes my-cassettes",
    ]
    assert "base_url=" in example and promised == "incomplete IncompleteDetails(reason='max_output_tokens')"


def test_the_page_runs_as_written_recording_then_offline(tmp_path):
    _, _, promised = section()
    with BackgroundServer(create_app(SCENARIOS)) as upstream:
        (recording, first), (replaying, second) = run_section(upstream.url, tmp_path)
    assert first == second == promised
    assert "record mode new" in recording and "recorded into my-cassettes" in recording
    cassettes = sorted(p.name for p in (tmp_path / "my-cassettes").glob("*.yaml"))
    assert len(cassettes) == 1 and cassettes[0].startswith("count-from-1-to-200-separated-by-spaces-8-")
    assert "1 scenarios" in replaying
