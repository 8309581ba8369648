"""``serve --upstream``'s options, declared as the server's are (``server.options``), and the one
check of how they go together: what records needs an upstream to record from.
``mockllama.app.ServeOptions`` is these and the server's together."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mockllama.recordings.record import DEFAULT_MAX_REPLY_BYTES
from mockllama.server.options import OptionError, directory, option, seconds, whole
from mockllama.upstream.client import DEFAULT_TIMEOUT, parse_upstream
from mockllama.upstream.record_mode import SPELLINGS, RecordMode, parse_record_mode
from mockllama.upstream.record_on_miss import DEFAULT_RECORD_DIR, SHUTDOWN_GRACE, RecordOnMiss
from mockllama.upstream.spool import DEFAULT_REPLY_BUDGET


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


def record_on_miss(options: RecordingOptions) -> RecordOnMiss | None:
    """What ``serve --upstream`` does with a miss; None, without an upstream: replay only."""
    if options.upstream is None:
        return None
    return RecordOnMiss(
        parse_upstream(options.upstream, options.upstream_timeout),
        record_dir(options),
        options.record_mode or RecordMode.NEW,
        options.max_reply_bytes or DEFAULT_MAX_REPLY_BYTES,
        shutdown_grace=options.shutdown_grace,
        reply_budget=options.reply_budget,
    )
