"""One root's index: the keyword index and manifest, the vector store and the model, together.

Opening an :class:`Index` is cheap: the SQLite database opens at once, while Chroma and the
model load on first use. The write lock makes sure only one process changes an index at a time.

Several processes may read one index while another writes it. SQLite (WAL) gives each reader
whole transactions. A local Chroma client, though, caches the HNSW graph it loaded, so it sees
no vector written by another process afterwards — and, worse, would write its stale graph back.
Hence: taking the write lock reopens the client, and a reader reopens it (at most every few
seconds) when the writer's ``vectors_epoch`` counter in SQLite has moved.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from explorer.config import Settings
from explorer.core.chroma_server import parse_server_url
from explorer.core.embedder import Embedder, load_embedder
from explorer.core.keywords import FAILED, FRESH, PENDING, SKIPPED, VECTORS_EPOCH, KeywordIndex
from explorer.core.vectors import VectorStore, VectorStoreUnavailable
from explorer.core.write_lock import LockBusy, WriteLock

DATABASE_NAME = "index.sqlite"
CHROMA_DIR_NAME = "chroma"
LOCK_NAME = "write.lock"
LIVE_WRITER = "the explorer TUI"
"""How a live index names itself in the lock file; it keeps the index current while it runs."""
READER_REFRESH_SECONDS = 2.0
"""A reader reopens a local Chroma client written by another process at most this often."""


class IndexBusy(Exception):
    """Another process holds the index's write lock."""


class NoIndex(Exception):
    """The folder has not been indexed yet."""


@dataclass(frozen=True)
class Status:
    """What ``explorer status`` reports about an index."""

    root: str
    index_dir: str
    indexed: int
    stale: int
    skipped: int
    failed: int
    skip_reasons: dict[str, int]
    chunks: int
    vectors: int
    model: str
    vector_store: str
    """``local`` or ``server``."""
    vector_location: str
    """The Chroma directory or server URL."""
    vectors_available: bool
    """False when the server does not answer; ``vectors`` then counts what SQLite recorded."""
    dimension: int | None
    store_bytes: int
    last_update: float | None
    needs_rebuild: bool
    rebuild_reason: str
    waiting_for_vectors: int = 0
    """Stale files that are in the keyword index and wait for their vectors."""
    edited: int = 0
    """Files edited on disk since the last index run (counted only when the disk was checked)."""
    new: int = 0
    """Files on disk the index does not hold yet."""
    deleted: int = 0
    """Files the index holds that are gone from disk."""
    disk_checked: bool = False
    """True when the folder was compared with the manifest (a stat walk)."""

    def as_json(self) -> dict:
        return {
            "root": self.root,
            "index_dir": self.index_dir,
            "files": {
                "indexed": self.indexed,
                "stale": self.stale,
                "skipped": self.skipped,
                "failed": self.failed,
            },
            "skip_reasons": self.skip_reasons,
            "chunks": self.chunks,
            "vectors": self.vectors,
            "model": self.model,
            "vector_store": {
                "kind": self.vector_store,
                "location": self.vector_location,
                "available": self.vectors_available,
            },
            "dimension": self.dimension,
            "store_bytes": self.store_bytes,
            "last_update": self.last_update,
            "needs_rebuild": self.needs_rebuild,
            "rebuild_reason": self.rebuild_reason,
            "stale": {
                "waiting_for_vectors": self.waiting_for_vectors,
                "edited": self.edited,
                "new": self.new,
                "deleted": self.deleted,
                "disk_checked": self.disk_checked,
            },
        }


class Index:
    """The stores and the model of one root, opened lazily."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.keywords = KeywordIndex(settings.index_dir / DATABASE_NAME)
        self._vectors: VectorStore | None = None
        self._embedder = embedder
        self._vectors_lock = threading.Lock()
        self._embedder_lock = threading.Lock()
        self._write_lock = WriteLock(settings.index_dir / LOCK_NAME)
        self._vectors_epoch: str | None = None
        self._vectors_opened_at = 0.0

    @classmethod
    def open_existing(cls, settings: Settings, embedder: Embedder | None = None) -> Index:
        """Open an index that must already exist (for search, related and status)."""
        if not (settings.index_dir / DATABASE_NAME).exists():
            raise NoIndex(
                f"{settings.root} has no index at {settings.index_dir}; "
                f"run: explorer index {settings.root}"
            )
        return cls(settings, embedder)

    @property
    def shared_vectors(self) -> bool:
        """True when vectors live on a Chroma server (chosen by ``settings.chroma_url``)."""
        return bool(self.settings.chroma_url)

    @property
    def vector_location(self) -> str:
        if self.settings.chroma_url:
            return parse_server_url(self.settings.chroma_url).url
        return str(self.settings.index_dir / CHROMA_DIR_NAME)

    @property
    def vectors(self) -> VectorStore:
        """The vector store, opened on first use (raises VectorStoreUnavailable if a server
        does not answer; the next use tries again)."""
        with self._vectors_lock:
            if self._vectors is None:
                epoch = self.keywords.get_meta(VECTORS_EPOCH)
                if self.settings.chroma_url:
                    address = parse_server_url(self.settings.chroma_url)
                    self._vectors = VectorStore(address=address, model=self.settings.model)
                else:
                    self._vectors = VectorStore(self.settings.index_dir / CHROMA_DIR_NAME)
                self._vectors_epoch, self._vectors_opened_at = epoch, time.monotonic()
            elif not self._write_lock.held and not self._vectors.shared:
                self._refresh_reader()
            return self._vectors

    def _refresh_reader(self) -> None:
        """Reopen a local client another process has written to since it was opened."""
        assert self._vectors is not None
        epoch = self.keywords.get_meta(VECTORS_EPOCH)
        if epoch == self._vectors_epoch:
            return
        if time.monotonic() - self._vectors_opened_at < READER_REFRESH_SECONDS:
            return
        self._vectors.reopen()
        self._vectors_epoch, self._vectors_opened_at = epoch, time.monotonic()

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:  # not the vectors' lock: the model loads while Chroma opens
            if self._embedder is None:
                self._embedder = load_embedder(self.settings.model)
            return self._embedder

    # -- the write lock -----------------------------------------------------------------------
    def acquire_write_lock(self, holder: str = "explorer index") -> None:
        """Take the one-writer lock, or raise :class:`IndexBusy` at once.

        ``holder`` names this process to another that finds the index busy. A vector store
        opened before the lock is reopened: another writer may have changed it meanwhile.
        """
        if self._write_lock.held:
            return
        try:
            self._write_lock.acquire(f"{holder} (pid {os.getpid()})")
        except LockBusy as busy:
            other = busy.holder
            advice = (
                "it keeps the index up to date while it runs"
                if other.startswith(LIVE_WRITER)
                else "wait for it to finish"
            )
            raise IndexBusy(
                f"the index of {self.settings.root} is being written by {other}; {advice}"
            ) from None
        with self._vectors_lock:
            if self._vectors is not None and not self._vectors.shared:
                self._vectors.reopen()

    def release_write_lock(self) -> None:
        """Let another process write; the lock file goes with the lock."""
        self._write_lock.release()

    # -- status -------------------------------------------------------------------------------
    def status(self, count_vectors: bool = True, check_disk: bool = False) -> Status:
        """What the index holds; ``check_disk`` also compares the folder with the manifest
        (a stat walk) and counts edited, new and deleted files as stale."""
        counts = self.keywords.counts()
        indexed, waiting = counts[FRESH], counts[PENDING]
        edited = new = deleted = 0
        if check_disk:
            from explorer.core.disk_state import compare_with_disk

            records = self.keywords.files()
            changes = compare_with_disk(self.settings, records)
            edited, new, deleted = len(changes.edited), len(changes.new), len(changes.deleted)
            for path in (*changes.edited, *changes.deleted):  # stale now, whatever they were
                state = records[path].state
                indexed -= state == FRESH
                waiting -= state == PENDING
        stored_model = self.keywords.get_meta("model")
        stored_dimension = self.keywords.get_meta("dimension")
        needs_rebuild, reason = False, ""
        if stored_model and stored_model != self.settings.model:
            needs_rebuild = True
            reason = f"model changed from {stored_model} to {self.settings.model}"
        last = self.keywords.get_meta("last_update")
        vectors, available = counts["embedded"], True
        if count_vectors:
            try:
                if self.shared_vectors:  # the server's count is every checkout's: ask for ours
                    vectors = len(self.vectors.existing_chunk_ids(self.keywords.chunk_ids()))
                elif (self.settings.index_dir / CHROMA_DIR_NAME).exists():
                    vectors = self.vectors.count_chunks()
            except VectorStoreUnavailable:
                available = False
        return Status(
            root=str(self.settings.root),
            index_dir=str(self.settings.index_dir),
            indexed=indexed,
            stale=waiting + edited + new + deleted,
            skipped=counts[SKIPPED],
            failed=counts[FAILED],
            skip_reasons=self.keywords.skip_reasons(),
            chunks=counts["chunks"],
            vectors=vectors,
            model=stored_model or self.settings.model,
            vector_store="server" if self.shared_vectors else "local",
            vector_location=self.vector_location,
            vectors_available=available,
            dimension=int(stored_dimension) if stored_dimension else None,
            store_bytes=_directory_size(self.settings.index_dir),
            last_update=float(last) if last else None,
            needs_rebuild=needs_rebuild,
            rebuild_reason=reason,
            waiting_for_vectors=waiting,
            edited=edited,
            new=new,
            deleted=deleted,
            disk_checked=check_disk,
        )

    def touch_last_update(self) -> None:
        self.keywords.set_meta("last_update", repr(time.time()))

    def close(self) -> None:
        self.release_write_lock()
        with self._vectors_lock:
            if self._vectors is not None:
                self._vectors.close()
                self._vectors = None
        self.keywords.close()


def _directory_size(directory: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(directory):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(dirpath, name))
            except OSError:
                pass
    return total
