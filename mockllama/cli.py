"""The ``mockllama`` command: a click group that imports only the command that runs.

Each command is a module of ``mockllama.commands``, so that each loads what it needs and nothing
else: ``serve`` never loads ``check``, the recorder or the teaching tools, and ``check`` no server."""

from __future__ import annotations

import importlib

import click

from mockllama import __version__

# Each command is the click command of the same name in mockllama.commands.<name>.
COMMANDS = ("check", "explain", "record", "scenarios", "serve")


class LazyGroup(click.Group):
    """A group that names its commands and imports the one asked for (click's own extension points)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return getattr(importlib.import_module(f"mockllama.commands.{name}"), name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="mockllama")
def main() -> None:
    """Replay real llama-server recordings for offline tests of OpenAI-compatible clients.

    llama-server's /v1/responses reports every reply as "completed", even one cut off by
    max_output_tokens. mockllama replays real recordings as llama-server sent them (buggy),
    as a correct server would (fixed), or corrected in the full OpenAI wire format (spec),
    chosen per request.
    """
