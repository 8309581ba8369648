"""The docs' parts made from the code's declarations, each between two markers on its page:
``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``. tests/docs/test_generated_docs.py holds each
equal to a fresh one; to write them all again, from the checkout, with what the pytest plugin
reads as it loads (mockllama/pytest_plugin/offered.json, held by tests/plugin/test_plugin_options.py):

    python tests/support/generated_docs.py
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mockllama.app import ServeOptions
from mockllama.behaviours.registry import BEHAVIOURS, markdown_list
from mockllama.behaviours.variants import REPLIES as VARIANT_REPLIES
from mockllama.behaviours.variants import chat_markdown_table as chat_variants_table
from mockllama.behaviours.variants import markdown_table as variants_table
from mockllama.pytest_plugin.session import OFFERED_FILE, base_url_behaviours, offered_json
from mockllama.server.options import options_table, plugin_table

ROOT = Path(__file__).resolve().parents[2]  # the checkout (no import of support: this also runs as a script)
DOCS = ROOT / "docs"


@dataclass(frozen=True)
class Generated:
    page: Path
    name: str  # of its markers
    make: Callable[[], str]

    @property
    def markers(self) -> tuple[str, str]:
        return f"<!-- {self.name}:begin -->", f"<!-- {self.name}:end -->"

    def on_page(self) -> str:
        begin, end = self.markers
        text = self.page.read_text(encoding="utf-8")
        return text[text.index(begin) + len(begin) : text.index(end)].strip("\n")

    def write(self) -> None:
        begin, end = self.markers
        text = self.page.read_text(encoding="utf-8")
        pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.DOTALL)
        self.page.write_text(pattern.sub(lambda _: f"{begin}\n{self.make()}\n{end}", text), encoding="utf-8")


def readme_behaviours() -> str:
    """README's list, kept short: the behaviours that are no server's variant, then the variants in one line."""
    variants = ", ".join(f"**{name}**" for name in BEHAVIOURS if name in VARIANT_REPLIES)
    line = f"- {variants}: other servers' truncation signals on the same recordings ([the variants](docs/variants.md))."
    return markdown_list(base_url_behaviours()).removesuffix(".") + ";\n" + line


def sweeps_table() -> str:
    """The bundled sweeps, from the recordings themselves (stock and patched) and the catalogues' notes."""
    from mockllama.recordings.cassettes import RECORDING_SETS, load_scenarios
    from mockllama.recordings.catalogue import BUNDLED_CATALOGUES, load_catalogue

    notes = {entry.name: entry.note for name in BUNDLED_CATALOGUES for entry in load_catalogue(name) if entry.sweep}
    found: dict[str, dict[str, list]] = {}
    for recordings in RECORDING_SETS:
        for scenario in load_scenarios([RECORDING_SETS[recordings]()]).values():
            if scenario.sweep is not None:
                found.setdefault(scenario.sweep, {}).setdefault(recordings, []).append(scenario)
    head = "| sweep | endpoint | set-up | positions | the server says cut | recorded | what it is |"
    rows = [head, "| --- " * 7 + "|"]
    for name in sorted(found, key=lambda sweep: list(notes).index(sweep) if sweep in notes else len(notes)):
        sets = found[name]
        positions = sorted(sets["stock"], key=lambda scenario: scenario.limit or 0)
        cut = [scenario.limit for scenario in positions if scenario.stopped_by_limit()]
        span = f"{cut[0]}-{cut[-1]}" if cut else "none"
        endpoint = positions[0].endpoints[0]
        rows.append(
            f"| `{name}` | `{endpoint}` | {positions[0].setup} | {positions[0].limit}-{positions[-1].limit} "
            f"| {span} | {', '.join(sorted(sets))} | {notes.get(name) or ''} |"
        )
    return "\n".join(rows)


GENERATED = [
    Generated(DOCS / "serving.md", "options", lambda: options_table(ServeOptions)),
    Generated(DOCS / "pytest.md", "plugin-options", lambda: plugin_table(ServeOptions)),
    Generated(DOCS / "behaviours.md", "behaviours", markdown_list),
    Generated(DOCS / "index.md", "behaviours", markdown_list),
    Generated(ROOT / "README.md", "behaviours", readme_behaviours),
    Generated(DOCS / "variants.md", "variants", variants_table),
    Generated(DOCS / "variants.md", "chat-variants", chat_variants_table),
    Generated(DOCS / "sweeps.md", "sweeps", sweeps_table),
]

if __name__ == "__main__":
    for part in GENERATED:
        part.write()
        print(f"wrote {part.name} into {part.page.relative_to(ROOT)}", file=sys.stderr)
    OFFERED_FILE.write_text(offered_json(), encoding="utf-8")
    print(f"wrote {OFFERED_FILE.relative_to(ROOT)}", file=sys.stderr)
