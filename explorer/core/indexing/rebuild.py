"""Rebuild an index from scratch beside the live one, then swap it in.

``explorer index --rebuild`` must not leave a folder without search for the minutes a full
embedding takes. So the new index is built in a folder of its own inside the index directory
(``rebuilding/``), with the live index's write lock held (no other writer meanwhile; readers go
on searching the old index). Once it is complete it replaces the old one:

1. the new Chroma folder is renamed into place (the old one is moved aside, then deleted);
2. the new database is copied into the live one with SQLite's online backup, one write
   transaction: readers see the old index or the new one, never a mixture and never nothing.

The new database carries a higher ``vectors_epoch``, so a reader that keeps the index open
reopens its vector store on its next search. A rebuild that fails or is interrupted leaves the
old index untouched; its half-built folder is deleted by the next rebuild.

With vectors on a Chroma server there is nothing to swap there: vectors are named by content,
so the new index finds every vector the server already holds for the same model.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.indexing.disk_state import scan_rules
from explorer.core.indexing.indexer import Indexer
from explorer.core.indexing.report import IndexReport, ProgressCallback
from explorer.core.settings import IndexSettings
from explorer.core.store.embedding_ledger import VECTORS_EPOCH
from explorer.core.store.index import Index
from explorer.core.store.index_files import (
    CHROMA_DIR_NAME,
    DATABASE_NAME,
    OLD_VECTORS_NAME,
    REBUILD_DIR_NAME,
)
from explorer.core.store.keywords import StoredChunk


class RebuildCancelled(ExplorerError):
    """The rebuild was stopped before it was complete; the old index is unchanged."""


def rebuild(
    settings: IndexSettings,
    meta: dict[str, str] | None = None,
    progress: ProgressCallback | None = None,
    embed: bool = True,
    cancel: threading.Event | None = None,
) -> IndexReport:
    """Build the index of ``settings.root`` anew beside the live one and swap it in.

    ``meta`` is written into the new index's meta table (the CLI's stored root, say). Raises
    :class:`~explorer.core.store.index.IndexBusy` when another process writes the index.
    """
    # The model is checked before anything is written; the live index is checked (and set
    # aside if damaged, an empty database included) as any writer's is.
    live = Index.open_for_writing(settings, holder="explorer index --rebuild", check_model=True)
    try:
        aside_dir = settings.index_dir / REBUILD_DIR_NAME
        shutil.rmtree(aside_dir, ignore_errors=True)  # what an interrupted rebuild left
        aside = Index(replace(settings, index_dir=aside_dir))
        try:
            aside.record_root()
            for key, value in (meta or {}).items():
                aside.keywords.set_meta(key, value)
            indexer = Indexer(aside)
            indexer.rules = scan_rules(settings)  # never index the live index's own folder
            indexer.vector_phase.donor = _donor(live)
            report = indexer.sync(progress=progress, cancel=cancel, embed=embed)
            if report.cancelled:
                raise RebuildCancelled("the rebuild was stopped; the old index is unchanged")
            old_epoch = int(live.keywords.get_meta(VECTORS_EPOCH) or 0)
            new_epoch = int(aside.keywords.get_meta(VECTORS_EPOCH) or 0)
            aside.keywords.set_meta(VECTORS_EPOCH, str(old_epoch + new_epoch + 1))
        finally:
            aside.close()
        live.keywords.close()  # the copy below is the only writer of the live database
        _swap_in(aside_dir, settings.index_dir)
        shutil.rmtree(aside_dir, ignore_errors=True)
        report.tightened = [entry.describe(settings.index_dir) for entry in live.tightened]
        return report
    finally:
        live.close()


class LiveVectors:
    """The live index's vectors, lent to the index a rebuild builds: a chunk of the same id
    (same path, file content and place) gets its vector unless the live index holds another
    text for it (the chunker changed). A live keyword index that lost its chunks (cut to zero
    bytes) lends every vector by id, as ``explorer index`` reuses them."""

    def __init__(self, live: Index) -> None:
        self.live = live

    def vectors_for(self, chunks: Sequence[StoredChunk]) -> dict[str, np.ndarray]:
        stored = self.live.vectors.chunk_vectors([chunk.id for chunk in chunks])
        before = self.live.keywords.chunks_by_id(list(stored))
        lent = {}
        for chunk in chunks:
            old = before.get(chunk.id)
            if chunk.id in stored and (old is None or _same_text(old, chunk)):
                lent[chunk.id] = stored[chunk.id]
        return lent


def _same_text(old: StoredChunk, new: StoredChunk) -> bool:
    """Whether both chunks are embedded from the same text (body, heading and title)."""
    return (old.text, old.heading, old.title) == (new.text, new.heading, new.title)


def _donor(live: Index) -> LiveVectors | None:
    """The live index's vectors, when they can be lent: a local store of the same model (a
    server already lends its vectors by id; another model's vectors are no use)."""
    if live.shared_vectors:
        return None
    if live.keywords.get_meta("model") not in (None, live.settings.model):
        return None
    return LiveVectors(live)


def _swap_in(aside_dir: Path, live_dir: Path) -> None:
    """Put the index built in ``aside_dir`` in the place of the one in ``live_dir``."""
    new_vectors = aside_dir / CHROMA_DIR_NAME
    if new_vectors.exists():  # first the vectors: readers follow the database's epoch to them
        old_vectors = live_dir / OLD_VECTORS_NAME
        shutil.rmtree(old_vectors, ignore_errors=True)
        if (live_dir / CHROMA_DIR_NAME).exists():
            os.rename(live_dir / CHROMA_DIR_NAME, old_vectors)
        os.rename(new_vectors, live_dir / CHROMA_DIR_NAME)
        shutil.rmtree(old_vectors, ignore_errors=True)
    source = sqlite3.connect(aside_dir / DATABASE_NAME)
    target = sqlite3.connect(live_dir / DATABASE_NAME, timeout=60.0)
    try:
        source.backup(target)
        target.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        target.close()
        source.close()
