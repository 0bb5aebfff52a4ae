"""Which chunks have vectors: the embedding bookkeeping of the keyword index's database.

Held by :class:`~explorer.core.store.keywords.KeywordIndex` as ``keywords.ledger``, on the index's
SQLite connection and lock. A chunk's ``embedded`` flag says its vector is in the
vector store; a pending file whose chunks are all embedded is finished (file vector, ``fresh``).
Every recorded vector write bumps :data:`VECTORS_EPOCH`, so readers in other processes notice.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from explorer.core.models import FileState
from explorer.core.store.manifest_records import PendingChunk

VECTORS_EPOCH = "vectors_epoch"
"""Meta key bumped with every recorded vector write, so readers in other processes notice."""


class EmbeddingLedger:
    """Marks chunks embedded and files fresh, and repairs the marks after a model change."""

    def __init__(self, db: sqlite3.Connection, lock: threading.RLock) -> None:
        """Keep the books on ``db`` (the keyword index's connection), under its ``lock``."""
        self._db = db
        self._lock = lock
        self.changes = 0
        """Rows this ledger changed on the connection (of its ``total_changes``): the keyword
        tables' own version leaves them out (see ``KeywordIndex.keyword_version``)."""

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One transaction of the ledger's, its changed rows counted in :attr:`changes`."""
        with self._lock, self._db:
            before = self._db.total_changes
            try:
                yield
            finally:
                self.changes += self._db.total_changes - before

    def mark_fresh(self, path: str) -> None:
        with self._writing():
            self._db.execute(
                "UPDATE files SET state = ?, updated_at = ? WHERE path = ?",
                (FileState.FRESH, time.time(), path),
            )
            self._bump_vectors_epoch()

    def mark_unfinished(self, paths: Iterable[str]) -> None:
        """Fresh files whose file vector is missing: finish them again (pending, no chunk)."""
        with self._writing():
            self._db.executemany(
                "UPDATE files SET state = ? WHERE path = ? AND state = ?",
                [(FileState.PENDING, path, FileState.FRESH) for path in paths],
            )

    def _bump_vectors_epoch(self) -> None:
        self._db.execute(
            "INSERT INTO meta VALUES (?, '1') ON CONFLICT(key)"
            " DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (VECTORS_EPOCH,),
        )

    def pending(self) -> list[PendingChunk]:
        """The chunks not yet embedded, in file order: their ids, paths and text lengths (the
        texts are read a batch at a time, so a cold kernel-sized tree's are never all held)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, path, length(text) FROM chunks WHERE embedded = 0 ORDER BY path, ord"
            ).fetchall()
        return [PendingChunk(*row) for row in rows]

    def mark_embedded(self, chunk_ids: Iterable[str]) -> None:
        rows = [(i,) for i in chunk_ids]
        if not rows:
            return
        with self._writing():
            self._db.executemany("UPDATE chunks SET embedded = 1 WHERE id = ?", rows)
            self._bump_vectors_epoch()

    def embedded_chunks(self) -> dict[str, str]:
        """{chunk id: path} of every chunk recorded as embedded."""
        with self._lock:
            rows = self._db.execute("SELECT id, path FROM chunks WHERE embedded = 1").fetchall()
        return {row[0]: row[1] for row in rows}

    def any_embedded(self) -> bool:
        """Whether any chunk is recorded as embedded (then the vector store must exist)."""
        with self._lock:
            row = self._db.execute("SELECT 1 FROM chunks WHERE embedded = 1 LIMIT 1").fetchone()
        return row is not None

    def unembedded_ids(self) -> set[str]:
        """Ids of the chunks not recorded as embedded."""
        with self._lock:
            rows = self._db.execute("SELECT id FROM chunks WHERE embedded = 0").fetchall()
        return {row[0] for row in rows}

    def files_ready_to_finish(self, among: Iterable[str] | None = None) -> list[str]:
        """Pending files whose every chunk is embedded; ``among``: of these paths only (the
        files a model batch just embedded: the others' state did not change, and looking at
        every pending file after each batch took 10 ms a batch with 10,000 of them)."""
        ready = (
            "SELECT path FROM files WHERE state = ? AND NOT EXISTS"
            " (SELECT 1 FROM chunks c WHERE c.path = files.path AND c.embedded = 0)"
        )
        with self._lock:
            if among is None:
                rows = self._db.execute(ready, (FileState.PENDING,)).fetchall()
            else:
                one = ready + " AND path = ?"
                rows = [
                    row
                    for path in sorted(set(among))
                    for row in self._db.execute(one, (FileState.PENDING, path)).fetchall()
                ]
        return [row[0] for row in rows]

    # -- repair -------------------------------------------------------------------------------
    def reset_embedded(self) -> None:
        """Mark every chunk as needing a vector again (the model changed)."""
        with self._writing():
            self._db.execute("UPDATE chunks SET embedded = 0")
            self._db.execute(
                "UPDATE files SET state = ? WHERE state = ? AND chunk_count > 0",
                (FileState.PENDING, FileState.FRESH),
            )

    def mark_missing_vectors(self, chunk_ids: Iterable[str]) -> None:
        """Chunks recorded as embedded whose vectors the store lacks: embed them again."""
        ids = list(chunk_ids)
        if not ids:
            return
        with self._writing():
            self._db.executemany("UPDATE chunks SET embedded = 0 WHERE id = ?", [(i,) for i in ids])
            self._db.execute(
                "UPDATE files SET state = ? WHERE state = ? AND EXISTS (SELECT 1 FROM chunks c"
                " WHERE c.path = files.path AND c.embedded = 0)",
                (FileState.PENDING, FileState.FRESH),
            )
