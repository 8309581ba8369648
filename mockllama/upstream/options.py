"""``serve --upstream``'s options, declared as the server's are (``server.options``), and the one
check of how they go together: what records needs an upstream to record from.
``mockllama.options.ServeOptions`` is these and the server's together. Declarations only: what
records (``record_on_miss``) is imported by a server that has an upstream, not by one that replays."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mockllama.recordings.cassettes import CASSETTE_SUFFIXES
from mockllama.server.option_fields import OptionError, directory, option, seconds, whole
from mockllama.upstream.client import DEFAULT_TIMEOUT, parse_upstream
from mockllama.upstream.record_mode import SPELLINGS, RecordMode, parse_record_mode
from mockllama.upstream.spool import DEFAULT_REPLY_BUDGET
from mockllama.wire.sizes import DEFAULT_MAX_REPLY_BYTES

DEFAULT_RECORD_DIR = "mockllama-cassettes"
# Seconds that stopping the server (the end of a pytest session, SIGTERM, Ctrl-C) gives the
# recordings in progress to finish; what still waits on the upstream then is abandoned unwritten.
SHUTDOWN_GRACE = 5.0


def _upstream(address: str) -> str:
    parse_upstream(address)  # the address is kept as given: its credentials are only ever sent, never shown
    return address.strip()


@dataclass(frozen=True)
class RecordingOptions:
    """What to record from a live llama-server, and where; nothing, without ``upstream``."""

    upstream: str | None = field(
        default=None,
        repr=False,  # it may hold a password
        metadata=option(
            "--upstream",
            "A live llama-server (base URL, no /v1) to send what no recording answers to, and record. "
            "Credentials in the URL are sent as Basic auth and never written.",
            metavar="URL",
            parse=_upstream,
        ),
    )
    record_to: Path | None = field(
        default=None,
        metadata=option(
            "--record-to",
            "Where --upstream recordings go, one cassette per scenario; served too, once it holds one, with "
            f"or without --upstream. Default: ./{DEFAULT_RECORD_DIR}",
            metavar="DIR",
            parse=directory,
            directory=True,
            plugin_help="Where recordings go, one cassette per scenario; served too, once it holds one, with or "
            f"without an upstream. Default: {DEFAULT_RECORD_DIR} beside the ini file (or in the rootdir).",
        ),
    )
    record_mode: RecordMode | None = field(
        default=None,
        metadata=option(
            "--record-mode",
            "none: replay only. new (vcrpy's new_episodes): record what no recording matches. "
            "all: record everything again. Default: new with --upstream.",
            parse=parse_record_mode,
            choices=lambda: SPELLINGS,
        ),
    )
    upstream_timeout: float = field(
        default=DEFAULT_TIMEOUT,
        metadata=option(
            "--upstream-timeout",
            "Seconds to wait for the upstream's next bytes; past it, a 504.",
            metavar="SECONDS",
            parse=seconds(0.1),
        ),
    )
    max_reply_bytes: int | None = field(
        default=None,
        metadata=option(
            "--max-reply-bytes",
            "With --upstream: an upstream reply larger than N bytes is cut off there, answered with a 502 and "
            f"not recorded. Default: {DEFAULT_MAX_REPLY_BYTES} (64 MiB), as `record`.",
            metavar="N",
            parse=whole(1),
        ),
    )

    shutdown_grace: float = field(
        default=SHUTDOWN_GRACE,
        metadata=option(
            "--shutdown-grace",
            "With --upstream: on Ctrl-C or SIGTERM, seconds the recordings in progress may take to finish; "
            "past it they are abandoned, nothing of them written, and recorded again on the next miss.",
            metavar="SECONDS",
            parse=seconds(0),
        ),
    )
    reply_budget: int = field(
        default=DEFAULT_REPLY_BUDGET,
        metadata=option(
            "--reply-budget",
            "With --upstream: upstream reply bytes that all recordings in progress may hold between them; "
            "a miss whose reply would pass it gets a 503. Replies over 1 MiB are held in a temporary file.",
            metavar="BYTES",
            parse=whole(1),
        ),
    )

    def __post_init__(self) -> None:
        if self.record_mode is not None:
            object.__setattr__(self, "record_mode", parse_record_mode(self.record_mode))
        if self.upstream is not None:
            return
        if self.record_mode in (RecordMode.NEW, RecordMode.ALL):
            raise OptionError(
                "record_mode",
                f"record mode {self.record_mode.value!r} records from a live llama-server: it needs {{needs}}",
                needs="upstream",
            )
        if self.max_reply_bytes is not None:
            raise OptionError(
                "max_reply_bytes", "limits the replies of a live llama-server: it needs {needs}", needs="upstream"
            )


def record_dir(options: RecordingOptions) -> Path:
    """Where recordings go, and what is served from there."""
    return options.record_to if options.record_to is not None else Path(DEFAULT_RECORD_DIR)


def with_record_dir(directories: list[Path], record_to: Path) -> list[Path]:
    """The record directory is served too, once it holds a cassette (it may not exist yet)."""
    holds = record_to.is_dir() and any(p.suffix in CASSETTE_SUFFIXES for p in record_to.rglob("*"))
    return [*directories, record_to] if holds else list(directories)
