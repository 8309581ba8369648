"""An index of a cassette directory, so that 10,000 recordings load in a second or two, not minutes.

Reading one cassette (YAML parsed safely, its aliases bounded, vcrpy's reading, every reply
checked) takes about 5 ms, so 10,000 took over a minute; holding every reply body in memory
took 470 MB. The index keeps what reading produced: each interaction's request, status, headers,
turn and the keys the matcher looks it up by, and the reply bodies (in the same file, among them),
read only when a reply is first needed. It is used for every file whose size, mtime, ctime and
inode are as they were when it was written (git's index checks the same); any other file is read
and checked afresh, and the index rewritten. Size and mtime alone are not enough: ``tar``,
``rsync -t`` and ``cp -p`` put an edited file back with its old mtime, and an edit of the same
size would then be served from the old reply. Setting the mtime sets the ctime, and a file
replaced by another (a rename) has another inode; neither can be set back by hand.

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
from typing import IO

from mockllama import __version__

FORMAT = 5
MAGIC = b"mockllama-index\0"
_HEADER = struct.Struct("<QQ")  # where the list of entry chunks is (after _START), and its length
_START = len(MAGIC) + _HEADER.size  # where the bodies and entry chunks start
# Entries marshalled together as they come, between the bodies: a first start never holds them
# all marshalled at once (65 MB at 10,000 recordings), and has none left to write at its end.
CHUNK = 64
# The modules whose code decides what a cassette loads as and what it matches.
_READING_CODE = (
    "recordings/cassettes.py",
    "recordings/safe_yaml.py",
    "recordings/shape.py",
    "wire/nesting.py",
    "wire/sse.py",
    "recordings/chat_twin.py",
    "recordings/catalogue.py",
    "recordings/index.py",
    "matching/rules.py",
    "matching/equivalences.py",
    "matching/canonical.py",
    "matching/keys.py",
    "matching/pipeline.py",
    "matching/fingerprint.py",
    "matching/words.py",
)


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


def stamp(path: Path) -> tuple[int, int, int, int]:
    """What says a file is as it was: its size, mtime, ctime and inode."""
    status = path.stat()
    return status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino


def unchanged(entry: tuple | None, now: tuple) -> list | None:
    """The indexed record of a file whose ``stamp`` is ``now``, or None when it must be read afresh."""
    return entry[1] if entry is not None and entry[0] == now else None


class Bodies:
    """The reply bodies of one index file, read on demand from the file as it was opened (an index
    rewritten meanwhile by another process is a new file: this one keeps reading the old)."""

    def __init__(self, fd: int, start: int):
        self._fd = fd
        self._start = start

    def read(self, offset: int, length: int) -> bytes:
        return os.pread(self._fd, length, self._start + offset)

    def close(self) -> None:
        """Once nothing reads from this index any more (a new one holds its bodies)."""
        os.close(self._fd)


def read_index(directory: Path, variant: str = "plain") -> tuple[dict[str, tuple], Bodies | None]:
    """({relative path: (stamp, record)}, its bodies), or ({}, None) when there is none to use.
    In a record each body is an (offset, length) pair into the Bodies."""
    path = index_path(directory, variant)
    if path is None:
        return {}, None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return {}, None
    try:
        head = os.pread(fd, _START, 0)
        if not head.startswith(MAGIC) or len(head) != _START:
            raise ValueError("not an index")
        at, length = _HEADER.unpack_from(head, len(MAGIC))
        entries = {}
        for chunk_at, chunk_length in marshal.loads(os.pread(fd, length, _START + at)):
            entries.update(marshal.loads(os.pread(fd, chunk_length, _START + chunk_at)))
    except (OSError, EOFError, ValueError, TypeError, struct.error):
        os.close(fd)
        return {}, None
    return entries, Bodies(fd, _START)


class IndexWriter:
    """Writes an index as the records come, each reply body to the file at once, so that a first
    start at 10,000 recordings never holds every body in memory: the bodies, a chunk of marshalled
    entries after every CHUNK files, then the list of the chunks, whose place the header names.
    Written to a temporary file and renamed (another process may be reading the old index). Where
    no index is kept (``MOCKLLAMA_INDEX_DIR=off``) or it cannot be written, the bodies go to an
    unnamed temporary file instead, read from there."""

    def __init__(self, directory: Path, variant: str = "plain"):
        self._path = index_path(directory, variant)
        self._entries: dict[str, tuple] = {}  # not yet written out
        self._chunks: list[tuple[int, int]] = []
        self._offset = 0  # where the next write goes, after _START
        named: IO[bytes] | None = None
        if self._path is not None:
            try:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                named = tempfile.NamedTemporaryFile(dir=self._path.parent, prefix=".index-", delete=False)
            except OSError:
                self._path = None
        self._handle: IO[bytes] = named if named is not None else tempfile.TemporaryFile()
        self._handle.write(bytes(_START))  # the header, filled in by finish
        # The bodies as written so far, readable at once (from the same file, renamed or not).
        self.bodies = Bodies(os.dup(self._handle.fileno()), _START)

    def add(self, relative: str, file_stamp: tuple, record: list[tuple]) -> list[tuple]:
        """``record`` with each body (its last field, bytes) written out and replaced by its place.
        Written through at once: ``bodies`` may read it straight away."""
        stored = []
        for *fields, body in record:
            stored.append((*fields, (self._offset, len(body))))
            self._offset += len(body)
        self._handle.writelines(body for *_, body in record)
        self._entries[relative] = (file_stamp, stored)
        if len(self._entries) >= CHUNK:
            self._write_entries()
        self._handle.flush()
        return stored

    def _write_entries(self) -> None:
        packed = marshal.dumps(self._entries)
        self._handle.write(packed)
        self._chunks.append((self._offset, len(packed)))
        self._offset += len(packed)
        self._entries = {}

    def finish(self) -> None:
        """The entries written and the file made the index; ``bodies`` goes on reading from it."""
        self._write_entries()
        chunks = marshal.dumps(self._chunks)
        self._handle.write(chunks)
        self._handle.seek(0)
        self._handle.write(MAGIC + _HEADER.pack(self._offset, len(chunks)))
        self._handle.close()
        if self._path is not None:
            try:
                os.replace(self._handle.name, self._path)
            except OSError:
                self._discard_file()  # the open descriptor still reads it: this start goes on

    def abort(self) -> None:
        """A load that failed half way: no index is written."""
        self._handle.close()
        self.bodies.close()
        if self._path is not None:
            self._discard_file()

    def _discard_file(self) -> None:
        try:
            os.unlink(self._handle.name)
        except OSError:
            pass
