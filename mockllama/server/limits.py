"""Process limits for the server: as many open sockets as the system allows, and a quiet log
when even that runs out, or when a client sends what is not HTTP.

With the usual soft limit of 1024 open files, a thousand idle clients starve new ones. And when
accept() fails for want of file descriptors, asyncio logs a traceback for every attempt, many
times a second (tens of thousands of lines in a few seconds); one line a second says as much.
Likewise aiohttp logs a traceback for every request its parser refuses; one line says as much.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time

from aiohttp.http_exceptions import HttpProcessingError

from mockllama.wire.terminal import printable

try:
    import resource
except ImportError:  # not on Windows, which has no such limit to raise
    resource = None  # type: ignore[assignment]  # the name is the module where there is one; None is tested at each use

log = logging.getLogger("mockllama")

# asyncio's own wording (selector_events.BaseSelectorEventLoop._accept_connection)
ACCEPT_OUT_OF_RESOURCES = "socket.accept() out of system resource"
UNLIMITED_TARGET = 1 << 20  # when the hard limit is "unlimited", the kernel still caps at nr_open


def raise_open_file_limit() -> tuple[int, int] | None:
    """Raise the soft RLIMIT_NOFILE to the hard limit; return (before, after), or None if unknown."""
    if resource is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft, soft
        return soft, target
    return soft, soft


def open_file_limit() -> int | None:
    return None if resource is None else resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class AcceptErrorLog:
    """A loop exception handler: failed accept()s logged once per ``interval`` at most, without a
    traceback; anything else goes to the handler that was there before."""

    def __init__(self, previous=None, interval: float = 1.0, clock=time.monotonic):
        self.previous = previous
        self.interval = interval
        self.clock = clock
        self.last = -math.inf
        self.suppressed = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        if context.get("message") != ACCEPT_OUT_OF_RESOURCES:
            if self.previous is not None:
                self.previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        now = self.clock()
        if now - self.last < self.interval:
            self.suppressed += 1
            return
        more = f"; {self.suppressed} more since the last report" if self.suppressed else ""
        log.warning(
            "mockllama: cannot accept new connections (%s; open files limit %s)%s. Idle clients "
            "hold sockets: close them, or raise the limit with ulimit -n.",
            context.get("exception"),
            open_file_limit(),
            more,
        )
        self.last, self.suppressed = now, 0


async def quiet_accept_errors(app) -> None:
    """aiohttp on_startup hook: install AcceptErrorLog on the running loop."""
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(AcceptErrorLog(loop.get_exception_handler()))


class UnparsableRequestLog(logging.Filter):
    """A filter for aiohttp's ``aiohttp.server`` logger: a request its HTTP parser refused (it
    answers those itself, a plain 400) is logged as one warning line instead of a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        refused = record.exc_info[1] if record.exc_info else None
        if isinstance(refused, HttpProcessingError) and str(record.msg).startswith("Error handling request"):
            reason = printable(" ".join(str(refused.message).split()))[:200]
            record.msg = "mockllama: refused a request from %s that is not valid HTTP (%s: %s)"
            peer = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.args = (peer, refused.code, reason)
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True
