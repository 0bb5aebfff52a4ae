"""Phase 2 of a sync (see :mod:`explorer.core.indexing.indexer`): vectors for the keyword phase's
chunks.

A :class:`VectorPhase` reconciles Chroma with the keyword index, embeds the pending chunks, and
marks a file fresh once its file vector is stored. The
:class:`~explorer.core.indexing.indexer.Indexer` holds one and tells it which vectors its keyword
phase made obsolete.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Protocol

import numpy as np

from explorer.core.embed.allocator import give_back_free_memory
from explorer.core.embed.embedder import MODEL_BATCH
from explorer.core.indexing.cpu_share import limit_model_threads, lower_this_thread
from explorer.core.indexing.embed_priority import (
    MODEL_STEPS,
    EmbeddingPriority,
    EmbeddingQueue,
    keyword_neighbours,
)
from explorer.core.indexing.report import IndexReport, Progress, ProgressCallback
from explorer.core.models import FileState, SyncPhase
from explorer.core.store.index import Index
from explorer.core.store.index_files import CHROMA_DIR_NAME
from explorer.core.store.keywords import StoredChunk
from explorer.core.store.manifest_records import FileRecord
from explorer.core.store.vectors import (
    CHROMA_DATABASE,
    FileVector,
    VectorStore,
    VectorStoreDamaged,
    file_vector_id,
)

CONTEXT_TOKENS = 24
"""Most tokens of heading context put before a chunk's text when it is embedded."""
DONOR_BATCH = 512
"""Chunks whose vectors are asked of a :class:`VectorDonor` at a time."""


class VectorDonor(Protocol):
    """Another store's vectors, lent to an index being built (a rebuild borrows the live
    index's): the vectors it holds for chunks of the same id and the same text."""

    def vectors_for(self, chunks: Sequence[StoredChunk]) -> dict[str, np.ndarray]:
        """The vector of each of ``chunks`` the donor holds for that very chunk."""
        ...


class StoredVectors:
    """The vectors of a store this index kept them in before (its local folder, before it
    moved to a server), lent by chunk id: the keyword index is the same, so a chunk of that id
    holds the text its vector was made of."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store

    def vectors_for(self, chunks: Sequence[StoredChunk]) -> dict[str, np.ndarray]:
        return self.store.chunk_vectors([chunk.id for chunk in chunks])

    def close(self) -> None:
        self.store.close()


class VectorPhase:
    """Vectors for an index's pending chunks, and the deletion of those made obsolete."""

    def __init__(self, index: Index, priority: EmbeddingPriority | None = None) -> None:
        """``priority``: what the user looks at, embedded first (see
        :mod:`explorer.core.indexing.embed_priority`); without it, the most recently modified
        first."""
        self.index = index
        self.priority = priority
        self.donor: VectorDonor | None = None
        """Where vectors are taken before any is embedded (see :class:`VectorDonor`)."""
        self._stale_vector_ids: list[str] = []
        self._stale_file_vectors: list[str] = []

    # -- what the keyword phase made obsolete -------------------------------------------------
    def drop_chunk_vectors(self, ids: list[str], keep: set[str] | None = None) -> None:
        """Note chunk vectors to delete (but those in ``keep``); they go in one call before the
        next embedding."""
        self._stale_vector_ids.extend(i for i in ids if not keep or i not in keep)

    def drop_file_vector(self, path: str, record: FileRecord | None) -> None:
        """Note the file vector of ``record`` (the file's previous content) to delete."""
        if record is not None and record.hash:
            self._stale_file_vectors.append(file_vector_id(path, record.hash))

    def forget_stale(self) -> None:
        """Drop the notes (a new sync starts; reconciling deletes what they named)."""
        self._stale_vector_ids.clear()
        self._stale_file_vectors.clear()

    def flush_deletions(self) -> None:
        """Delete the noted vectors now."""
        if self.index.shared_vectors:  # a shared store keeps every version (see vectors.py)
            self.forget_stale()
            return
        if self._stale_vector_ids:
            self.index.vectors.delete_chunks(sorted(set(self._stale_vector_ids)))
            self._stale_vector_ids.clear()
        if self._stale_file_vectors:
            self.index.vectors.delete_files(sorted(set(self._stale_file_vectors)))
            self._stale_file_vectors.clear()

    def reconcile_vectors(self, report: IndexReport) -> None:
        """Handle a model change, reuse stored vectors, repair what an interrupted run left.

        A local store is listed whole: vectors no chunk names are deleted. A shared store is
        only asked about this index's ids (it holds other checkouts' too), and the chunks whose
        vectors it already has are not embedded again: that is how a second machine reuses
        the first one's work.
        """
        keywords, vectors = self.index.keywords, self.index.vectors
        model = self.index.settings.model
        stored = keywords.get_meta("model")
        if stored is not None and stored != model:
            vectors.reset()
            keywords.ledger.reset_embedded()
        keywords.set_meta("model", model)
        location = keywords.get_meta("vector_location")
        moved = self._moved_from_local(location, same_model=stored == model)
        if location != vectors.location:
            keywords.set_meta("vector_location", vectors.location)
        in_sqlite = set(keywords.chunk_ids())
        if vectors.shared:
            in_store = vectors.existing_chunk_ids(sorted(in_sqlite))
        else:
            in_store = vectors.chunk_ids()
            orphans = sorted(in_store - in_sqlite)
            vectors.delete_chunks(orphans)
            # The keyword phase noted the vectors of chunks it replaced or removed: deleting
            # those is this sync's own work, not a repair of what an interrupted run left.
            report.orphans_removed = len(set(orphans) - set(self._stale_vector_ids))
        self.forget_stale()
        unembedded = keywords.ledger.unembedded_ids()
        lost = in_sqlite - in_store - unembedded  # recorded as embedded; the store lacks them
        report.vectors_lost = len(lost)
        keywords.ledger.mark_missing_vectors(lost)
        reusable = sorted(unembedded & in_store)
        keywords.ledger.mark_embedded(reusable)
        report.chunks_reused = len(reusable) + self._borrow()
        if moved is not None:  # what the server lacks was not lost: it is still here
            try:
                given = self._borrow(moved)
            finally:
                moved.close()
            report.chunks_moved = given
            report.vectors_lost = max(0, report.vectors_lost - given)
        records = keywords.files()
        expected = {
            file_vector_id(path, record.hash): path
            for path, record in records.items()
            if record.state == FileState.FRESH and record.chunk_count
        }
        if vectors.shared:
            present = vectors.existing_file_ids(sorted(expected))
        else:
            stored_ids = vectors.file_ids()
            vectors.delete_files(sorted(stored_ids - expected.keys()))
            present = stored_ids & expected.keys()
        keywords.ledger.mark_unfinished(sorted(expected[i] for i in expected.keys() - present))

    def _moved_from_local(self, location: str | None, same_model: bool) -> StoredVectors | None:
        """The index's own local store, when this sync moves its vectors from there to a
        server for the same model: what it holds is uploaded rather than embedded again. None
        otherwise. ``location``: where the vectors were kept until now; a folder (the index
        directory may have moved since) means the local store, whose vectors are the model's
        (it is emptied when the model changes while it is in use); a server means the local
        folder, if any, is older than that and not to be trusted."""
        index = self.index
        local = index.settings.index_dir / CHROMA_DIR_NAME
        was_local = location is not None and not location.startswith(("http://", "https://"))
        if not index.shared_vectors or not same_model or not was_local:
            return None
        if not (local / CHROMA_DATABASE).is_file():
            return None
        try:
            return StoredVectors(VectorStore(local, repair_command=index.repair_command))
        except VectorStoreDamaged:
            return None  # nothing to take from it: the chunks are embedded again

    def _borrow(self, donor: VectorDonor | None = None) -> int:
        """Store the vectors ``donor`` (by default :attr:`donor`) holds of the chunks waiting
        for one; how many it gave."""
        donor = donor or self.donor
        if donor is None:
            return 0
        keywords, store = self.index.keywords, self.index.vectors
        pending = keywords.ledger.pending()
        given = 0
        for start in range(0, len(pending), DONOR_BATCH):
            ids = [chunk.id for chunk in pending[start : start + DONOR_BATCH]]
            batch = list(keywords.chunks_by_id(ids).values())
            found = donor.vectors_for(batch)
            chunks = [chunk for chunk in batch if chunk.id in found]
            if not chunks:
                continue
            ids = [chunk.id for chunk in chunks]
            vectors = np.asarray([found[i] for i in ids], dtype=np.float32)
            store.upsert_chunks(ids, vectors, [chunk.path for chunk in chunks])
            keywords.ledger.mark_embedded(ids)
            keywords.set_meta("dimension", str(vectors.shape[1]))
            given += len(ids)
        return given

    def embed_pending(
        self,
        report: IndexReport,
        notify: ProgressCallback,
        cancel: threading.Event | None = None,
        only: Collection[str] | None = None,
        finished: Callable[[list[str]], None] | None = None,
    ) -> None:
        """Embed every chunk not yet in Chroma (of the files ``only`` names, if given), then
        finish files.

        The order is the indexer's :class:`~explorer.core.indexing.embed_priority.EmbeddingPriority`
        (most recently modified files first without one). ``finished`` hears the paths made
        fresh after each model batch, so a reader can use them before the whole run ends.
        """
        self.flush_deletions()
        pending = self.index.keywords.ledger.pending()
        if only is not None:
            pending = [c for c in pending if c.path in only]
        # This run's vectors of the files not finished yet, by path: a file's go once its file
        # vector is made, so what is held does not grow with the folder.
        fresh_vectors: dict[str, dict[str, np.ndarray]] = {}
        started = time.perf_counter()

        def finish(among: Iterable[str] | None = None) -> None:
            fresh = self._finish_files(fresh_vectors, among)
            for path in fresh:
                fresh_vectors.pop(path, None)
            if fresh and finished is not None:
                finished(fresh)

        if pending:
            lower_this_thread()  # before the model starts its threads: they inherit it
            embedder = self.index.embedder
            load = getattr(embedder, "load_document_model", None)
            if load is not None:
                notify(Progress(SyncPhase.MODEL, chunks_total=len(pending)))
                load(len(pending))  # a few chunks are embedded without loading torch
                report.model_seconds = time.perf_counter() - started
                started = time.perf_counter()
            limit_model_threads(self.index.settings.embed_threads)
            self.index.keywords.set_meta("dimension", str(embedder.dimension))
            # Sorted by the chunk's own length (its heading context adds a few tokens to each);
            # the texts are read and the text to embed built per batch, so the first batch
            # starts at once and only a batch of texts is held.
            keywords = self.index.keywords
            queue = EmbeddingQueue(
                pending,
                keywords.files(),
                self.index.settings.embed_batch,
                self.priority,
                lambda path: keyword_neighbours(keywords, path),
            )
            total, done = len(pending), 0
            notify(Progress(SyncPhase.EMBED, chunks_done=0, chunks_total=total))
            while queue.remaining:
                if self._told_to_stop(cancel, report):
                    break
                ids = [c.id for c in queue.next_batch()]
                chunks = keywords.chunks_by_id(ids)
                batch = [chunks[i] for i in ids if i in chunks]  # one removed meanwhile: none
                texts = {chunk.id: self.embedding_text(chunk) for chunk in batch}
                # Longest first, as sentence-transformers orders a call's texts: each model
                # step below gets the passages it would have got inside one call of the whole
                # batch (the same padding), and between steps a quit or a key typed is heard
                # (a call of 128 passages held both cores for 4-9 s on the kernel's docs).
                batch.sort(key=lambda chunk: -len(texts[chunk.id]))
                embedded: list[StoredChunk] = []
                vectors: list[np.ndarray] = []
                for start in range(0, len(batch), MODEL_BATCH):
                    if start and self._told_to_stop(cancel, report):
                        break
                    step = batch[start : start + MODEL_BATCH]
                    with MODEL_STEPS.turn(cancel) as held:
                        if not held or self._cancelled(cancel, report):
                            report.cancelled = True
                            break
                        vectors.extend(embedder.embed_documents([texts[c.id] for c in step]))
                    embedded += step
                if not embedded:
                    continue
                # One write per batch (a write to the store costs ~11 ms whatever its size),
                # of the steps done: a cancel keeps them.
                ids = [c.id for c in embedded]
                self.index.vectors.upsert_chunks(
                    ids, np.asarray(vectors), [c.path for c in embedded]
                )
                self.index.keywords.ledger.mark_embedded(ids)
                for chunk, vector in zip(embedded, vectors, strict=True):
                    fresh_vectors.setdefault(chunk.path, {})[chunk.id] = vector
                give_back_free_memory()  # the batch's buffers: freed, but kept by the heaps
                report.chunks_embedded += len(embedded)
                done += len(embedded)
                notify(
                    Progress(
                        SyncPhase.EMBED,
                        chunks_done=done,
                        chunks_total=total,
                        seconds_left=_seconds_left(done, total, time.perf_counter() - started),
                    )
                )
                # the first batch looks at every pending file (some may have needed only their
                # file vector); the later ones at the files they embedded
                finish({chunk.path for chunk in embedded} if done > len(embedded) else None)
        finish()
        report.embed_seconds = time.perf_counter() - started

    def _told_to_stop(self, cancel: threading.Event | None, report: IndexReport) -> bool:
        """Before a model step: wait while another folder's keywords are read or the user
        types, then whether the sync is cancelled (the report says so)."""
        if self.priority is not None:
            self.priority.wait_for_turn(cancel)
        return self._cancelled(cancel, report)

    @staticmethod
    def _cancelled(cancel: threading.Event | None, report: IndexReport) -> bool:
        """Whether the sync is cancelled (the report then says so)."""
        if cancel is not None and cancel.is_set():
            report.cancelled = True
            return True
        return False

    def embed_in_memory(self, path: str) -> dict[str, np.ndarray]:
        """The vectors of ``path``'s chunks ({chunk id: vector}), computed and not stored: a
        reader's stand-in while another process holds the write lock."""
        chunks = self.index.keywords.chunks_by_id(self.index.keywords.chunk_ids(path))
        if not chunks:
            return {}
        ids = list(chunks)
        texts = [self.embedding_text(chunks[i]) for i in ids]
        vectors = self.index.embedder.embed_documents(texts)
        return dict(zip(ids, vectors, strict=True))

    def _finish_files(
        self, known_vectors: dict[str, dict[str, np.ndarray]], among: Iterable[str] | None = None
    ) -> list[str]:
        """Give every fully embedded pending file (of ``among`` only, if given) its file vector
        and mark it fresh; the paths so finished.

        A file vector the store already holds (same path and content) is kept as it is.
        """
        keywords, store = self.index.keywords, self.index.vectors
        ready = keywords.ledger.files_ready_to_finish(among)
        if not ready:
            return []
        file_ids = {}
        for path in ready:
            record = keywords.file(path)
            file_ids[path] = file_vector_id(path, record.hash if record else "")
        present = store.existing_file_ids(file_ids.values())
        new_files: list[FileVector] = []
        for path in ready:
            if file_ids[path] not in present:
                ids = keywords.chunk_ids(path)
                known = known_vectors.get(path, {})
                missing = [i for i in ids if i not in known]
                stored = store.chunk_vectors(missing) if missing else {}
                vectors = [known[i] if i in known else stored.get(i) for i in ids]
                vectors = [v for v in vectors if v is not None]
                if vectors:
                    mean = np.mean(np.asarray(vectors, dtype=np.float32), axis=0)
                    norm = float(np.linalg.norm(mean))
                    vector = mean / norm if norm else mean
                    new_files.append(FileVector(file_ids[path], path, vector))
        # One write for all of them: each write to the store costs ~11 ms whatever its size, so
        # a write per file made a folder of small notes wait on the store (2,200 files: 24 s).
        store.upsert_files(new_files)
        for path in ready:  # fresh only once its file vector is stored
            keywords.ledger.mark_fresh(path)
        return ready

    def embedding_text(self, chunk: StoredChunk) -> str:
        """The chunk's text with its title and heading path before it, cut to a few tokens."""
        parts = [chunk.title] if chunk.title else []
        if chunk.heading and chunk.heading != chunk.title:
            parts.append(chunk.heading)
        context = " > ".join(parts)
        if not context:
            return chunk.text
        spans = self.index.embedder.token_spans(context)
        if len(spans) > CONTEXT_TOKENS:
            context = context[: spans[CONTEXT_TOKENS - 1][1]]
        return f"{context}\n{chunk.text}"


MIN_CHUNKS_FOR_ESTIMATE = 256
"""Chunks embedded before the time left is estimated: the first batches, longest chunks first,
say little about the rate."""


def _seconds_left(done: int, total: int, elapsed: float) -> float | None:
    """The time left to embed ``total`` chunks at the rate of the ``done`` first, or None while
    too few are done to tell."""
    if done < MIN_CHUNKS_FOR_ESTIMATE or done >= total or elapsed <= 0:
        return None
    return (total - done) * elapsed / done
