"""The ``mockllama`` command: a click group that imports only the command that runs.

Each command is a module of ``mockllama.commands``, so that each loads what it needs and nothing
else: ``serve`` never loads ``check``, the recorder or the teaching tools, and ``check`` no server."""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Iterator

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

    def main(self, args=None, *more, **options):
        """click's; when the words come from the process's own command line (the installed command,
        ``python -m mockllama``), not from a caller, the command is imported first (``start``)."""
        if args is None:
            start(sys.argv[1:])
        return super().main(args, *more, **options)


def start(words: list[str]) -> None:
    """Import the command these words run, as a process that is that command starts: with the
    collector paused, and what was imported then put out of its sight (``gc.freeze``: it lives as
    long as the process, and each collection on the way would walk all of it again); for `serve`
    without --upstream, aiohttp with no CA file first (``no_default_ca_file``)."""
    if not words or words[0] not in COMMANDS:
        return
    collecting = gc.isenabled()
    gc.disable()
    try:
        if replays_only(words):
            with no_default_ca_file():
                import aiohttp  # noqa: F401 (for the TLS contexts it makes as it is imported)
        importlib.import_module(f"mockllama.commands.{words[0]}")
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def replays_only(words: list[str]) -> bool:
    """Whether these command-line words run `serve` without --upstream: a server that opens no
    connection of its own."""
    return words[:1] == ["serve"] and not any(
        word == "--upstream" or word.startswith("--upstream=") for word in words[1:]
    )


@contextlib.contextmanager
def no_default_ca_file() -> Iterator[None]:
    """OpenSSL's default CA file (``SSL_CERT_FILE``) pointed at nothing, then put back.

    aiohttp makes its default client TLS contexts as it is imported, and each reads the whole
    system CA bundle, which on OpenSSL 3 is the largest single part of `serve`'s start. A server
    that only replays makes no connection of its own, so it imports aiohttp without one: those
    contexts then trust no certificate, which fails a TLS connection made through them rather
    than let one through unchecked. Any TLS context made afterwards reads the CA file as usual."""
    before = os.environ.get("SSL_CERT_FILE")
    os.environ["SSL_CERT_FILE"] = os.devnull
    try:
        yield
    finally:
        if before is None:
            del os.environ["SSL_CERT_FILE"]
        else:
            os.environ["SSL_CERT_FILE"] = before


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="mockllama")
def main() -> None:
    """Replay real llama-server recordings for offline tests of OpenAI-compatible clients.

    llama-server's /v1/responses reports every reply as "completed", even one cut off by
    max_output_tokens. mockllama replays real recordings as llama-server sent them (buggy),
    as a correct server would (fixed), or corrected in the full OpenAI wire format (spec),
    chosen per request.
    """
