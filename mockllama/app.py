"""The whole app, as `mockllama serve` and the pytest plugin run it: the replay server, with the
teaching page and, given an upstream, `serve --upstream`'s replay-or-record plugged in; and
``ServeOptions``, every option of `serve`, which both read from their own command line."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from mockllama.server.app import create_replay_app
from mockllama.server.options import ReplayOptions, blame
from mockllama.teaching import page
from mockllama.upstream import proxy
from mockllama.upstream.options import RecordingOptions
from mockllama.upstream.options import record_on_miss as recording_of
from mockllama.upstream.record_on_miss import RecordOnMiss

__all__ = ["ServeOptions", "create_app"]


@dataclass(frozen=True)
class ServeOptions(RecordingOptions, ReplayOptions):
    """Every option of `mockllama serve`: the replay server's (``ReplayOptions``), then the recording
    ones (``RecordingOptions``). ``serve``'s click options, the pytest plugin's options and ini keys
    and the docs' options tables are made from these fields (``server.options.options_of``)."""

    def __post_init__(self) -> None:
        ReplayOptions.__post_init__(self)
        RecordingOptions.__post_init__(self)


def create_app(
    scenarios, options: ServeOptions | None = None, *, record_on_miss: RecordOnMiss | None = None
) -> web.Application:
    """The server for ``scenarios`` with ``options`` (default: ``serve``'s defaults). With an
    upstream in the options, or ``record_on_miss`` made already, what no recording answers is sent
    to a live llama-server and recorded; without, the server never leaves its recordings. An option
    that does not fit the recordings raises ``server.options.OptionError``, which names it."""
    options = options if options is not None else ServeOptions()
    recording = record_on_miss if record_on_miss is not None else recording_of(options)

    def replay_or_record(app: web.Application):
        with blame("fallback"):  # a fallback answers every miss: nothing would be recorded
            return proxy.install(app, recording)

    route = None if recording is None else replay_or_record
    return create_replay_app(scenarios, options, route=route, pages=(page.install,))
