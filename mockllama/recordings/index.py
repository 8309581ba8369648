"""An index of a cassette directory, so that 10,000 recordings load in a second or two, not minutes.

Reading one cassette (YAML parsed safely, its aliases bounded, vcrpy's reading, every reply
checked) takes about 5 ms, so 10,000 took over a minute; holding every reply body in memory
took 470 MB. The index keeps what reading produced: each interaction's request, status, headers,
turn and the keys the matcher looks it up by, and the reply bodies after them in the same file,
read only when a reply is first needed. It is used for every file whose size and mtime are as
they were when it was written; any other file is read and checked afresh, and the index rewritten.

It lives in the user's cache directory (``$XDG_CACHE_HOME/mockllama/index`` or
``~/.cache/mockllama/index``; ``MOCKLLAMA_INDEX_DIR`` names another, ``MOCKLLAMA_INDEX_DIR=off``
turns it off), not beside the cassettes: a cassette directory is untrusted input, and an index
found there could vouch for files that were never checked. Only mockllama writes this one, from
cassettes that passed every check. It is keyed by the directory and by mockllama's own reading
code, so a mockllama that reads or matches differently never uses an older index. The format is
``marshal`` (plain values only), which reads several times faster than JSON; an index that cannot
be read is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import struct
import tempfile
from functools import lru_cache
from pathlib import Path

from mockllama import __version__

FORMAT = 2
MAGIC = b"mockllama-index\0"
_HEADER = struct.Struct("<Q")  # the length of the marshalled entries; the bodies follow them
# The modules whose code decides what a cassette loads as and what it matches.
_READING_CODE = ("recordings/cassettes.py", "recordings/safe_yaml.py", "recordings/shape.py", "wire/nesting.py",
                 "wire/sse.py", "recordings/chat_twin.py", "recordings/catalogue.py", "recordings/index.py",
                 "matching/canonical.py", "matching/keys.py")


def index_dir() -> Path | None:
    configured = os.environ.get("MOCKLLAMA_INDEX_DIR")
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "0") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mockllama" / "index"


@lru_cache(maxsize=1)
def _code_version() -> str:
    digest = hashlib.sha256(f"{FORMAT} {__version__}".encode())
    package = Path(__file__).resolve().parent.parent
    for name in _READING_CODE:
        digest.update((package / name).read_bytes())
    return digest.hexdigest()


def index_path(directory: Path, variant: str = "plain") -> Path | None:
    """``variant`` names what else the loader computed into each record (the matcher's keys)."""
    base = index_dir()
    if base is None:
        return None
    key = hashlib.sha256(f"{directory.resolve()}\0{_code_version()}\0{variant}".encode()).hexdigest()[:32]
    return base / f"{key}.index"


def stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_size, status.st_mtime_ns


class Bodies:
    """The reply bodies of one index file, read on demand from the file as it was opened (an index
    rewritten meanwhile by another process is a new file: this one keeps reading the old)."""

    def __init__(self, fd: int, start: int):
        self._fd = fd
        self._start = start

    def read(self, offset: int, length: int) -> bytes:
        return os.pread(self._fd, length, self._start + offset)


def read_index(directory: Path, variant: str = "plain") -> tuple[dict[str, tuple], Bodies | None]:
    """({relative path: (size, mtime_ns, record)}, its bodies), or ({}, None) when there is none to use.
    In a record each body is an (offset, length) pair into the Bodies."""
    path = index_path(directory, variant)
    if path is None:
        return {}, None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return {}, None
    try:
        head = os.pread(fd, len(MAGIC) + _HEADER.size, 0)
        if not head.startswith(MAGIC) or len(head) != len(MAGIC) + _HEADER.size:
            raise ValueError("not an index")
        (length,) = _HEADER.unpack_from(head, len(MAGIC))
        entries = marshal.loads(os.pread(fd, length, len(head)))
        if not isinstance(entries, dict):
            raise ValueError("not an index")
    except (OSError, EOFError, ValueError, TypeError, struct.error):
        os.close(fd)
        return {}, None
    return entries, Bodies(fd, len(head) + length)


def write_index(directory: Path, entries: dict[str, tuple], variant: str = "plain") -> None:
    """``entries`` as read_index returns them, but with each record's bodies as bytes. Written
    atomically (another process may be reading); an index that cannot be written is no error:
    the next start reads the cassettes again."""
    path = index_path(directory, variant)
    if path is None:
        return
    bodies, offset, stored = [], 0, {}
    for relative, (size, mtime, record) in entries.items():
        interactions = []
        for *fields, body in record:
            interactions.append((*fields, (offset, len(body))))
            bodies.append(body)
            offset += len(body)
        stored[relative] = (size, mtime, interactions)
    packed = marshal.dumps(stored)
    handle = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".index-", delete=False) as handle:
            handle.write(MAGIC + _HEADER.pack(len(packed)))
            handle.write(packed)
            handle.writelines(bodies)
        os.replace(handle.name, path)
    except OSError:
        if handle is not None:
            try:
                os.unlink(handle.name)
            except OSError:
                pass
