"""Setting a damaged store aside: its files move to ``damaged-<time>/`` in the index directory.

Nothing is deleted: the user (or a bug report) can still look at what was damaged. The index
then opens a fresh store in its place and rebuilds it from the other one (see
:meth:`explorer.core.store.index.Index.repair`).
"""

from __future__ import annotations

import enum
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from explorer.core.private_files import PRIVATE_DIR_MODE

DAMAGED_PREFIX = "damaged-"
MAX_REASON = 120
"""Most characters of SQLite's or Chroma's own words kept in a one-line message."""


def damage_words(text: str) -> str:
    """SQLite's or Chroma's description of a damage, on one short line: ``quick_check``'s
    banner and Chroma's wrapping (``(code: 11)``, ``SqliteError { ... }``) dropped."""
    quoted = re.search(r'message: "([^"]*)"', text)
    if quoted is not None:
        text = quoted.group(1)
    text = re.sub(r"\*\*\* in database \w+ \*\*\*", "", text)
    text = re.sub(r"^.*\(code: \d+\)\s*", "", " ".join(text.split()))
    return text[:MAX_REASON] or "unreadable"


class Store(enum.Enum):
    """The two stores of an index."""

    KEYWORDS = "keyword index"
    VECTORS = "vector store"


@dataclass(frozen=True)
class Repair:
    """A damaged store that was set aside and replaced by a fresh one (or a lost one that was
    made anew: then nothing was kept)."""

    store: Store
    reason: str
    """SQLite's or Chroma's words for the damage."""
    kept_in: Path | None
    """Where the damaged files are now; None when there was nothing to keep (a store that was
    missing, a database that was empty)."""

    def describe(self) -> str:
        """One line for the user: what happened, what was rebuilt, where the files are."""
        rebuilt = (
            "rebuilt from the files, reusing the stored vectors"
            if self.store is Store.KEYWORDS
            else "its chunks are embedded again"
        )
        if self.kept_in is None:
            return f"repaired: the {self.store.value} was lost ({self.reason}); {rebuilt}"
        return (
            f"repaired: the {self.store.value} was damaged ({self.reason}); {rebuilt}; "
            f"the damaged files are in {self.kept_in}"
        )

    def as_json(self) -> dict[str, object]:
        kept_in = None if self.kept_in is None else str(self.kept_in)
        return {"store": self.store.value, "reason": self.reason, "kept_in": kept_in}


def set_aside(index_dir: Path, paths: Iterable[Path], store: Store, reason: str) -> Repair:
    """Move the existing ``paths`` into a new ``damaged-<time>`` folder of ``index_dir``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = index_dir / f"{DAMAGED_PREFIX}{stamp}"
    serial = 1
    while folder.exists():
        serial += 1
        folder = index_dir / f"{DAMAGED_PREFIX}{stamp}-{serial}"
    folder.mkdir(mode=PRIVATE_DIR_MODE)  # the index directory exists; the damaged text is private
    for path in paths:
        if path.exists() or path.is_symlink():
            path.rename(folder / path.name)
    return Repair(store, reason, folder)
