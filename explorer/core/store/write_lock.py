"""The one-writer lock of an index: an ``flock`` on a file that exists only while it is held.

Releasing removes the file, so no ``write.lock`` is left behind after the writer quits. Removing
a locked file needs care: another process may have opened the path just before it went, and then
locks the old, nameless file while a third process creates and locks a new one at the path; both
would think they hold the lock. So whoever takes the lock checks that the file it locked is still
the one at the path (same device and inode) and starts again otherwise; and the holder removes
the file before it unlocks, so the old file is never free while it still has the name.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import IO

from explorer.core.errors import ExplorerError
from explorer.core.private_files import PRIVATE_FILE_MODE

ATTEMPTS = 100
"""How often to retry when the file was replaced between opening and locking it."""


class LockBusy(ExplorerError):
    """Another process holds the lock; ``holder`` is how it named itself."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


class WriteLock:
    """An exclusive, non-blocking lock on ``path`` that names its holder in the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._handle is not None

    def acquire(self, holder: str) -> None:
        """Take the lock and write ``holder`` in it, or raise :class:`LockBusy` at once."""
        if self._handle is not None:
            return
        for _attempt in range(ATTEMPTS):
            handle = open(self.path, "a+", opener=_private)  # noqa: SIM115 - held until release
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                other = _read_holder(handle)
                handle.close()
                raise LockBusy(other) from None
            if _is_at_path(handle, self.path):
                handle.seek(0)
                handle.truncate()
                handle.write(holder)
                handle.flush()
                self._handle = handle
                return
            # The holder before us removed this file after we opened it: lock the new one.
            handle.close()
        raise LockBusy("another process (the lock file keeps changing)")

    def release(self) -> None:
        """Remove the lock file, then unlock it (in that order: see the module docstring)."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        try:
            if _is_at_path(handle, self.path):
                self.path.unlink()
        except OSError:  # a read-only folder: the lock still goes; the file stays
            pass
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


def _private(path: str, flags: int) -> int:
    """Open as :func:`open` would, creating the file with mode 0600 (it names the holder)."""
    return os.open(path, flags, PRIVATE_FILE_MODE)


def _is_at_path(handle: IO[str], path: Path) -> bool:
    """Whether the open file ``handle`` is still the file named ``path``."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle.fileno())
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def _read_holder(handle: IO[str]) -> str:
    """Who holds the lock, as it wrote in the lock file (it writes just after locking)."""
    for _attempt in range(10):
        handle.seek(0)
        text = handle.read().strip()
        if text:
            return text
        time.sleep(0.01)
    return "another process"
