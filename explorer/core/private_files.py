"""Private files: an index holds the full text of the files it indexed, so other users of the
machine must not read it.

Everything explorer writes into an index directory is created private, not made private
afterwards: folders with mode 0700 (:func:`make_private_dirs`), files with 0600
(:func:`create_private_file`). What a library creates inside (Chroma's database and segment
folders, the ONNX export) is created under :func:`private_umask`, which masks the group and
other bits for as long as the library call runs. An index made by an older explorer, with open
modes, is tightened by :func:`tighten` when it is next opened for writing, and
:func:`open_entries` finds what is still open for a command that only reads.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
OTHERS = 0o077
"""The group and other permission bits: none of them may be set in an index."""

_umask_lock = threading.Lock()
_umask_depth = 0
_umask_saved = 0


@contextlib.contextmanager
def private_umask() -> Iterator[None]:
    """Create every file and folder without group or other bits while the block runs.

    The umask belongs to the process, so nested and concurrent blocks (two stores written by
    two threads) share one count: the first to enter masks, the last to leave restores the
    user's umask. Another thread that creates a file meanwhile creates it private too, which
    errs on the safe side.
    """
    global _umask_depth, _umask_saved
    with _umask_lock:
        if _umask_depth == 0:
            _umask_saved = os.umask(OTHERS)
            os.umask(_umask_saved | OTHERS)
        _umask_depth += 1
    try:
        yield
    finally:
        with _umask_lock:
            _umask_depth -= 1
            if _umask_depth == 0:
                os.umask(_umask_saved)


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and every missing folder above it with mode 0700 (``mkdir -p`` would
    give the parents the umask's mode)."""
    missing: list[Path] = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:  # made meanwhile by another process; a file there fails below
            if not folder.is_dir():
                raise


def create_private_file(path: Path) -> bool:
    """Create ``path`` empty with mode 0600 unless it exists; True when it was created."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return False
    os.close(descriptor)
    return True


@dataclass(frozen=True)
class OpenEntry:
    """A file or folder that other users may read or enter."""

    path: Path
    mode: int
    """Its permission bits (``0o755``)."""

    def describe(self, base: Path) -> str:
        """``index.sqlite 0644``: its place under ``base`` and its mode."""
        name = str(self.path)
        if self.path != base and self.path.is_relative_to(base):
            name = self.path.relative_to(base).as_posix()
        return f"{name} {self.mode:04o}"


def _entries(
    directory: Path, own: Callable[[str], bool] | None
) -> Iterator[tuple[Path, os.stat_result]]:
    """``directory`` and everything under it (links are not followed), with their stat. With
    ``own``, only what it owns: the entries directly in ``directory`` whose names ``own``
    accepts and everything under them, and ``directory`` itself only when it holds nothing else
    (a folder of the user's own files that also holds an index keeps its mode)."""
    try:
        info = os.lstat(directory)
        names = os.listdir(directory)
    except OSError:
        return
    kept = [name for name in names if own is None or own(name)]
    if len(kept) == len(names):
        yield directory, info
    for name in sorted(kept):
        path = directory / name
        try:
            entry = os.lstat(path)
        except OSError:  # gone meanwhile
            continue
        yield path, entry
        if not stat.S_ISDIR(entry.st_mode):
            continue
        for folder, dirnames, filenames in os.walk(path):
            for inner in (*dirnames, *filenames):
                inner_path = Path(folder, inner)
                try:
                    yield inner_path, os.lstat(inner_path)
                except OSError:  # gone meanwhile
                    continue


def open_entries(
    tree: Path, folders: Iterable[Path] = (), own: Callable[[str], bool] | None = None
) -> list[OpenEntry]:
    """Every file and folder with a group or other bit: ``folders`` themselves (not what
    they hold), then ``tree`` and everything under it (with ``own``: what it owns, see
    :func:`_entries`). Symbolic links have no modes of their own and are left out."""
    found = []
    for path in folders:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_mode & OTHERS and not stat.S_ISLNK(info.st_mode):
            found.append(OpenEntry(path, stat.S_IMODE(info.st_mode)))
    for path, info in _entries(tree, own):
        if not stat.S_ISLNK(info.st_mode) and info.st_mode & OTHERS:
            found.append(OpenEntry(path, stat.S_IMODE(info.st_mode)))
    return found


def tighten(
    tree: Path, folders: Iterable[Path] = (), own: Callable[[str], bool] | None = None
) -> tuple[list[OpenEntry], list[OpenEntry]]:
    """Take the group and other bits off what :func:`open_entries` finds: (what was
    tightened, what could not be: another user's files)."""
    tightened, refused = [], []
    for entry in open_entries(tree, folders, own):
        try:
            os.chmod(entry.path, entry.mode & ~OTHERS, follow_symlinks=False)
        except OSError:
            refused.append(entry)
        else:
            tightened.append(entry)
    return tightened, refused
