"""What an index directory holds: the names of the entries explorer makes there.

explorer changes the modes of what it made and of nothing else (see
:mod:`explorer.core.private_files`), so it must know its own entries from the user's: an index
directory named by the user (``--index-dir``, ``EXPLORER_INDEX_DIR``, the TUI, the MCP server)
may be a folder of the user's own files. :func:`check_index_dir` refuses such a folder before
anything is written into it, and :func:`is_index_entry` tells a writer which entries of an
index directory it may make private.
"""

from __future__ import annotations

import os
from pathlib import Path

from explorer.core.embed.export_cache import EXPORT_DIR_NAME
from explorer.core.errors import ExplorerError
from explorer.core.store.damaged_store import DAMAGED_PREFIX

DATABASE_NAME = "index.sqlite"
CHROMA_DIR_NAME = "chroma"
LOCK_NAME = "write.lock"
REBUILD_DIR_NAME = "rebuilding"
"""The folder, inside the index directory, where a rebuild builds the new index."""
OLD_VECTORS_NAME = f"{CHROMA_DIR_NAME}.old"
"""Where a rebuild moves the old vector store while it swaps the new one in."""
ROOT_META = "root"
"""Meta key of the keyword index: the folder the index was built for (every writer records it)."""
READER_ENTRIES = ("reader.sock", "reader.lock")
"""The resident reader's socket and lock (the CLI's ``resident_client`` names them)."""

_OWN_NAMES = frozenset(
    {
        DATABASE_NAME,
        *(f"{DATABASE_NAME}{suffix}" for suffix in ("-wal", "-shm", "-journal")),
        CHROMA_DIR_NAME,
        OLD_VECTORS_NAME,
        LOCK_NAME,
        REBUILD_DIR_NAME,
        EXPORT_DIR_NAME,
        *READER_ENTRIES,
    }
)
_OWN_PREFIXES = (DAMAGED_PREFIX, f".{EXPORT_DIR_NAME}-")
"""Set-aside stores (``damaged-<time>``) and an export being staged or retired."""
NAMED_FOREIGN = 3
"""Entries of the user's that a refusal names (the rest are counted)."""


class IndexDirRefused(ExplorerError):
    """The index directory is a folder of other files (or the folder indexed): explorer will
    not put an index there."""


def is_index_entry(name: str) -> bool:
    """Whether an entry of that name, directly in an index directory, is one explorer makes."""
    return name in _OWN_NAMES or name.startswith(_OWN_PREFIXES)


def foreign_entries(index_dir: Path) -> list[str]:
    """The names of the entries of ``index_dir`` that explorer did not make, sorted (none when
    it is missing or not a folder)."""
    try:
        names = os.listdir(index_dir)
    except OSError:
        return []
    return sorted(name for name in names if not is_index_entry(name))


def check_index_dir(root: Path, index_dir: Path) -> None:
    """Refuse (:class:`IndexDirRefused`, one line saying why and what to give instead) an
    index directory that is the folder indexed, holds it, or holds files of its own without
    being an explorer index: a writer would put the index among the user's files."""
    instead = "name a new or empty folder for the index, or leave it out to use the default place"
    if index_dir == root or root.is_relative_to(index_dir):
        what = "is the folder indexed"
        if index_dir != root:
            what = f"holds the folder indexed ({root})"
        raise IndexDirRefused(f"the index folder {index_dir} {what}; {instead}")
    if (index_dir / DATABASE_NAME).is_file():
        return  # an index already (an older explorer may have put it among other files)
    foreign = foreign_entries(index_dir)
    if foreign:
        shown = ", ".join(foreign[:NAMED_FOREIGN])
        if len(foreign) > NAMED_FOREIGN:
            shown += f" and {len(foreign) - NAMED_FOREIGN} more"
        raise IndexDirRefused(
            f"the index folder {index_dir} holds files that are not an explorer index "
            f"({shown}); {instead}"
        )
