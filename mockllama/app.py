"""The whole app, as `mockllama serve` and the pytest plugin run it: the replay server, with the
teaching page and, given an upstream, `serve --upstream`'s replay-or-record plugged in.
``ServeOptions`` (``mockllama.options``) is every option of `serve`.

The recorder (``upstream.record_on_miss`` and ``upstream.proxy``: an HTTP client, the cassette
writer, the catalogue) is imported only when an upstream is configured: a server that only
replays never loads it, and starts sooner for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from mockllama.options import ServeOptions
from mockllama.recordings.cassettes import Scenario
from mockllama.server.app import create_replay_app
from mockllama.server.option_fields import blame
from mockllama.teaching import page

if TYPE_CHECKING:
    from mockllama.upstream.record_on_miss import RecordOnMiss

__all__ = ["ServeOptions", "create_app"]


def recording_of(options: ServeOptions) -> RecordOnMiss | None:
    """What ``serve --upstream`` does with a miss; None, without an upstream: replay only."""
    if options.upstream is None:
        return None
    from mockllama.upstream.record_on_miss import record_on_miss  # only with an upstream: see the module's docstring

    return record_on_miss(options)


def create_app(
    scenarios: dict[str, Scenario],
    options: ServeOptions | None = None,
    *,
    record_on_miss: RecordOnMiss | None = None,
) -> web.Application:
    """The whole mockllama server as an aiohttp application, as `mockllama serve` and the pytest
    plugin run it: the API routes under `/v1`, `/buggy/v1`, `/fixed/v1`, `/spec/v1` (one prefix
    a behaviour), the journal at `/_mockllama/journal`, and the teaching page at `/`.

    Args:
        scenarios: The recordings to serve, by scenario name, as
            `mockllama.recordings.cassettes.load_scenarios` loads them from cassette directories;
            pass it `keys_of=mockllama.matching.pipeline.match_keys` so that requests match
            recordings by their prompt, not only by a scenario's name.
        options: `serve`'s options; by default, `serve`'s defaults. With an `upstream` among them,
            what no recording answers is sent to that live llama-server and recorded.
        record_on_miss: The recorder for what no recording answers, when it is made already; it
            takes the place of the options' upstream. Without either, the server never leaves its
            recordings.

    Returns:
        The application, not yet running: serve it with `aiohttp.web.run_app`, or in a test
            with aiohttp's `TestServer`.

    Raises:
        ValueError: An option that does not fit the recordings, as an `OptionError` that names
            it: a fallback or faulted scenario that is not loaded, a set-up no recording is of.

    Example:
        The bundled recordings, served in the `fixed` behaviour to an aiohttp test client:

        ```python
        import asyncio

        from aiohttp.test_utils import TestClient, TestServer

        from mockllama.app import ServeOptions, create_app
        from mockllama.matching.pipeline import match_keys
        from mockllama.recordings.cassettes import bundled_cassette_dir, load_scenarios

        scenarios = load_scenarios([bundled_cassette_dir()], keys_of=match_keys)
        app = create_app(scenarios, ServeOptions(behaviour="fixed"))


        async def main():
            async with TestClient(TestServer(app)) as client:
                reply = await client.post("/v1/responses", json={"model": "text-cut-8", "input": "Hi"})
                print(reply.headers["X-Mockllama-Scenario"], (await reply.json())["status"])


        asyncio.run(main())
        # text-cut-8 incomplete
        ```
    """
    options = options if options is not None else ServeOptions()
    recording = record_on_miss if record_on_miss is not None else recording_of(options)
    route = None if recording is None else _replay_or_record(recording)
    return create_replay_app(scenarios, options, route=route, pages=(page.install,))


def _replay_or_record(recording: RecordOnMiss):
    """The API routes' handler maker for a server that records what no recording answers."""
    from mockllama.upstream import proxy  # only with an upstream: see the module's docstring

    def install(app: web.Application):
        with blame("fallback"):  # a fallback answers every miss: nothing would be recorded
            return proxy.install(app, recording)

    return install
