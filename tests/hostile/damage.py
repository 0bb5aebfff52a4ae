"""Damage an index's files the way a disk, a full volume or a careless copy does.

:func:`damage_file` works on any SQLite file: the keyword index (``index.sqlite``) and Chroma's
own database (``chroma/chroma.sqlite3``). Each kind is deterministic (a seeded generator), so a
failing test fails the same way again.
"""

from __future__ import annotations

import enum
import os
import random
from pathlib import Path

PAGE = 4096
"""SQLite's default page size."""


class Damage(enum.Enum):
    """How a file is damaged."""

    HALF = "half"
    """Cut to half its length (a copy or a write that stopped)."""
    GARBAGE = "garbage"
    """Overwritten whole with random bytes of the same length."""
    PAGES = "pages"
    """Pages 3-6 overwritten: the header survives, some b-tree pages do not."""
    LATER_PAGES = "later-pages"
    """Pages 10-17 overwritten: in Chroma's database this makes its Rust core panic on open."""
    MIDDLE = "middle"
    """Four pages in the middle of the file overwritten: in Chroma's database these hold its
    log of vectors, and Chroma fails with ``InvalidArgumentError ... compactor`` (no word of
    damage) when it reads them."""
    EMPTY = "empty"
    """Cut to zero bytes (a full disk, a failed copy): SQLite opens it as an empty database."""


def damage_file(path: Path, damage: Damage) -> bytes:
    """Damage ``path`` in place and return its damaged bytes."""
    size = path.stat().st_size
    rng = random.Random(damage.value)
    if damage is Damage.HALF:
        os.truncate(path, size // 2)
    elif damage is Damage.EMPTY:
        os.truncate(path, 0)
    elif damage is Damage.GARBAGE:
        path.write_bytes(rng.randbytes(size))
    else:
        first, count = {
            Damage.PAGES: (3, 4),
            Damage.LATER_PAGES: (10, 8),
            Damage.MIDDLE: (size // PAGE // 2, 4),
        }[damage]
        with path.open("r+b") as handle:
            handle.seek(first * PAGE)
            handle.write(rng.randbytes(count * PAGE))
    return path.read_bytes()
