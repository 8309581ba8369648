"""The session's server, started as soon as pytest collects a test that asks for it: the rest of
the collection, and whatever runs before that test, go on meanwhile, and the test finds it running.

pytest loads this module with the plugin, in every session, so it imports nothing of mockllama's:
the server (``session``) is imported when the first test that asks for it is collected. That
import is made on pytest's own thread, the rest of the start (the recordings, the app, the port)
on a thread of its own: pytest's assertion rewriter turns itself off while it writes a rewritten
module's bytecode, for every thread, so an import on another thread could leave a test module
that pytest imports at that moment unrewritten.

A start that fails (a bad option, a bad cassette) keeps its error for the ``mockllama`` fixture to
raise, so it fails the tests that ask for the server as it did before the start came early.
"""

from __future__ import annotations

import gc
import importlib
import threading
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mockllama.pytest_plugin.session import MockllamaServer

# The fixture that every other fixture of the plugin builds on: a test that asks for any of them asks for it.
SERVER_FIXTURE = "mockllama"
# pytest's options that select some of the collected tests (-k, -m, --deselect, --lf, --sw): with
# one of them, the start waits for the selection, so that a session whose selected tests do not
# ask for the server starts none.
SELECTING = ("keyword", "markexpr", "deselect", "lf", "stepwise")


class ServerStart:
    """The session's server on its way: ``server()`` waits for it, ``stop()`` ends it.

    ``collecting``: begun while pytest collects. What is alive then (pytest's own objects, the test
    modules, the recordings and the server) lives as long as the session, so it is put out of the
    collector's sight once the server runs (``gc.freeze``), as ``serve`` does after its start:
    else each full collection to the session's end walks all of it again. A start at a test's
    request, later, is not frozen: by then tests have made objects that may still become garbage.
    """

    def __init__(self, config: pytest.Config, collecting: bool):
        self._server: MockllamaServer | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        was_enabled = gc.isenabled()
        gc.disable()  # hundreds of thousands of objects are made now, none of them garbage
        try:
            session = importlib.import_module("mockllama.pytest_plugin.session")
        except Exception as err:  # raised at the fixture, as when the fixture imported it
            self._error = err
            if was_enabled:
                gc.enable()
            return
        self._thread = threading.Thread(
            target=self._start, args=(session, config, collecting, was_enabled), name="mockllama-start", daemon=True
        )
        self._thread.start()

    def _start(self, session, config: pytest.Config, collecting: bool, was_enabled: bool) -> None:
        try:
            self._server = session.started(config)
            if collecting:
                gc.freeze()
        except BaseException as err:  # pytest.fail's exception is a BaseException
            self._error = err
        finally:
            if was_enabled:
                gc.enable()

    def server(self) -> MockllamaServer:
        """The running server, once it runs; the start's error, raised here, if it failed."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._server is not None
        return self._server

    def stop(self) -> None:
        """Stop the server, once it has started; a start still under way is waited for."""
        if self._thread is not None:
            self._thread.join()
        server, self._server = self._server, None
        if server is not None:
            server.stop()


STARTED = pytest.StashKey[ServerStart]()


def asks_for_server(item: pytest.Item) -> bool:
    """Whether a collected test asks for the server, itself or through another of the plugin's fixtures."""
    return SERVER_FIXTURE in getattr(item, "fixturenames", ())


def begin(config: pytest.Config, collecting: bool) -> ServerStart:
    """The session's start, begun now unless it is under way already; stopped by the session's end at the latest."""
    if STARTED not in config.stash:
        config.stash[STARTED] = start = ServerStart(config, collecting)
        config.add_cleanup(start.stop)
    return config.stash[STARTED]


def end(config: pytest.Config) -> None:
    """Stop the session's server, if one was begun, and forget it."""
    start = config.stash.get(STARTED, None)
    if start is not None:
        del config.stash[STARTED]
        start.stop()


def _starts_early(config: pytest.Config) -> bool:
    return not config.option.collectonly and STARTED not in config.stash


def collected(item: pytest.Item) -> None:
    """A test was collected: if it is the first that asks for the server, begin the start, unless
    the command line selects tests (``SELECTING``), when ``selected`` decides."""
    config = item.config
    if _starts_early(config) and asks_for_server(item):
        if not any(config.getoption(name, None) for name in SELECTING):
            begin(config, collecting=True)


def selected(session: pytest.Session) -> None:
    """The collection is over: begin the start if a selected test asks for the server and none has
    begun; end one that no selected test asks for (the test that began it was deselected)."""
    config = session.config
    if any(asks_for_server(item) for item in session.items):
        if _starts_early(config):
            begin(config, collecting=True)
    else:
        end(config)
