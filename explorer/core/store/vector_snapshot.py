"""A private snapshot of a local Chroma store, for readers: Chroma cannot open a store without
writing to it.

Every ``chromadb.PersistentClient`` writes its directory when it starts, whatever it is asked
afterwards: its Rust core inserts a row into ``chroma.sqlite3``'s ``acquire_write`` table on
every start (a workaround for its SQLite pool), and a vector segment that was never persisted
(fewer than ``hnsw:sync_threshold`` vectors, 1,000 by default; explorer's stores now persist
after every write, see :data:`~explorer.core.store.vectors.PERSIST_EVERY`, but a store made
before may not have been written since) has its four HNSW files created again, truncated,
before the log is replayed into memory. No setting turns either off, and a
read-only directory makes the open fail. So a reader opens a copy taken here, and the index
directory stays byte for byte as the writer left it; a writer in another process can no longer
have its HNSW files truncated under it by a reader.

The database is copied with SQLite's backup API from a read-only connection: a consistent
snapshot even while a writer commits. The segment folders are copied after it, so they are at
least as new as the database says (Chroma replays the log from the sequence number the database
records; a segment newer than that gets records it already holds again, which an upsert
tolerates). A snapshot lives in the temporary folder (created 0700) and is removed on close; one
whose process was killed is removed by the next snapshot taken.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from urllib.parse import quote

SNAPSHOT_PREFIX = "explorer-vectors-"
"""Name of a snapshot's folder in the temporary folder: the prefix, the pid, a random part."""
CHROMA_DATABASE = "chroma.sqlite3"
BUSY_SECONDS = 10.0
"""How long the backup waits for a writer's commit to finish before copying."""
SEGMENT_COPIES = 3
"""Copies of a vector segment's folder taken, at most, while a writer keeps changing it."""


def take_snapshot(source: Path) -> Path:
    """A new private folder holding a copy of the Chroma store in ``source`` (an empty folder
    when ``source`` does not exist); the caller removes it with :func:`remove_snapshot`."""
    remove_abandoned_snapshots()
    copy = Path(tempfile.mkdtemp(prefix=f"{SNAPSHOT_PREFIX}{os.getpid()}-"))
    try:
        if source.is_dir():
            _copy_store(source, copy)
    except BaseException:
        remove_snapshot(copy)
        raise
    return copy


def remove_snapshot(copy: Path) -> None:
    shutil.rmtree(copy, ignore_errors=True)


def _copy_store(source: Path, copy: Path) -> None:
    database = source / CHROMA_DATABASE
    if database.is_file():
        _copy_database(database, copy / CHROMA_DATABASE)
    for entry in source.iterdir():
        if entry.name.startswith(CHROMA_DATABASE):  # the database, its journal: done above
            continue
        if entry.is_dir():
            _copy_segment(entry, copy / entry.name)
        elif entry.is_file():
            shutil.copyfile(entry, copy / entry.name)
    for folder, _dirs, _files in os.walk(copy):
        os.chmod(folder, 0o700)


def _copy_segment(folder: Path, target: Path) -> None:
    """Copy a vector segment's folder, again if a writer changed it meanwhile (at most
    :data:`SEGMENT_COPIES` times). A writer rewrites a segment's HNSW files in place after every
    write (see :data:`~explorer.core.store.vectors.PERSIST_EVERY`): a copy taken half before
    and half after one would be a graph no process built. Whatever a copy still meets, Chroma's
    reader reads again (``VectorStore._met_a_write``)."""
    for attempt in range(1, SEGMENT_COPIES + 1):
        before = _file_states(folder)
        # Plain copies (no modes): a read-only original must not give a read-only copy.
        shutil.copytree(folder, target, copy_function=shutil.copyfile)
        if attempt == SEGMENT_COPIES or _file_states(folder) == before:
            return
        shutil.rmtree(target)


def _file_states(folder: Path) -> dict[str, tuple[int, int]]:
    """Size and modification time of each file under ``folder``."""
    states = {}
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            info = path.stat()
            states[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return states


def _copy_database(database: Path, target: Path) -> None:
    """Copy Chroma's database through SQLite (a consistent snapshot), or byte for byte when
    SQLite cannot read it: a damaged database is then found damaged in the copy, as Chroma
    would find the original."""
    try:
        source = sqlite3.connect(
            f"file:{quote(str(database))}?mode=ro", uri=True, timeout=BUSY_SECONDS
        )
    except sqlite3.Error:
        shutil.copyfile(database, target)
        return
    try:
        with contextlib.closing(sqlite3.connect(target)) as copy:
            source.backup(copy)
    except sqlite3.Error:
        target.unlink(missing_ok=True)
        shutil.copyfile(database, target)
    finally:
        source.close()


def remove_abandoned_snapshots() -> None:
    """Remove this user's snapshots whose process is gone (killed before it could clean up)."""
    base = Path(tempfile.gettempdir())
    try:
        entries = list(base.glob(f"{SNAPSHOT_PREFIX}*"))
    except OSError:
        return
    for entry in entries:
        pid = _pid_of(entry.name)
        if pid is None or pid == os.getpid() or _alive(pid):
            continue
        try:
            if entry.is_dir() and entry.stat().st_uid == os.getuid():
                remove_snapshot(entry)
        except OSError:
            continue


def _pid_of(name: str) -> int | None:
    pid, _sep, _rest = name.removeprefix(SNAPSHOT_PREFIX).partition("-")
    return int(pid) if pid.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
