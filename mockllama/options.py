"""``ServeOptions``, every option of `mockllama serve`: the replay server's and the recording ones,
which `serve` and the pytest plugin both read from their own command line. Declarations only: the
plugin offers them when pytest starts, long before a test asks for a server."""

from __future__ import annotations

from dataclasses import dataclass

from mockllama.server.options import ReplayOptions
from mockllama.upstream.options import RecordingOptions

__all__ = ["ServeOptions"]


@dataclass(frozen=True)
class ServeOptions(RecordingOptions, ReplayOptions):
    """Every option of `mockllama serve`: the replay server's (``ReplayOptions``), then the recording
    ones (``RecordingOptions``).

    Each field is one of `serve`'s options, by its flag's name (`--max-body-bytes` is
    `max_body_bytes`; a repeatable one is a tuple, `--fault` is `faults`), e.g.
    `ServeOptions(behaviour="fixed", faults=(("tool-cut-20", "disconnect=3"),))`; the options
    table on the Running the server page lists them. A value an option cannot take, or options
    that do not fit together, raise a `ValueError` (an `OptionError`, which names the option).

    ``serve``'s click options, the pytest plugin's options and ini keys and the docs' options
    tables are made from these fields (``server.option_fields.options_of``).
    """

    def __post_init__(self) -> None:
        ReplayOptions.__post_init__(self)
        RecordingOptions.__post_init__(self)
