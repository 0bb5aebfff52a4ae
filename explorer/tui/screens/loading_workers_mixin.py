"""MainScreen's thread workers that read the index off the UI thread: query model warm-up,
vector count, the (throttled) manifest, and the related-files sidebar.
"""

from __future__ import annotations

import time
from typing import Any

from textual import work
from textual.message_pump import MessagePump
from textual.worker import get_current_worker

from explorer.tui import messages

MANIFEST_INTERVAL = 0.4
"""Least seconds between two reads of the manifest while files change."""
RELATED_FILES = 8
PENDING_FILE = "Embedding this file first… its related files appear once its vectors are ready."
"""The related sidebar while the open file waits for its vectors and the live index embeds."""
PENDING_NEIGHBOURS = "No other file has vectors yet: embedding its likely neighbours next…"


class LoadingWorkersMixin(MessagePump):
    """Loads the manifest, vector count, query model and related files; mixed into MainScreen."""

    @work(thread=True, exclusive=True, group="model", exit_on_error=False)
    def _warm_query_model(self, index: Any) -> None:
        """Open the vector store and warm the query encoder, off the UI thread."""
        from explorer.core.store.vectors import VectorStoreUnavailable

        try:
            try:
                vectors = index.vectors.count_chunks()
            except VectorStoreUnavailable as error:  # the live index reports it and recovers
                vectors = 0
                self.post_message(messages.IndexVectorsState(False, str(error)))
            load = getattr(index.embedder, "load_query_path", None)
            if load is not None:
                load()
        except Exception as error:  # noqa: BLE001 - keyword search goes on without it
            self.post_message(messages.QueryModelReady(False, f"{type(error).__name__}: {error}"))
            return
        self.post_message(messages.QueryModelReady(True, vectors=vectors))

    @work(thread=True, exclusive=True, group="vector-count", exit_on_error=False)
    def _count_vectors(self) -> None:
        index = self.index
        if index is None:
            return
        try:
            count = index.vectors.count_chunks()
        except Exception:  # noqa: BLE001 - a count is only informative
            return
        self.post_message(messages.VectorsCounted(count))

    def _request_manifest(self, now: bool = False, rerun_search: bool = False) -> None:
        """Read the manifest again, at most every :data:`MANIFEST_INTERVAL` seconds."""
        if self.index is None:
            return
        wait = self._manifest_at + MANIFEST_INTERVAL - time.monotonic()
        if now or wait <= 0:
            if self._manifest_due is not None:
                self._manifest_due.stop()
                self._manifest_due = None
            self._manifest_at = time.monotonic()
            self._load_manifest()
            if rerun_search and self._query.strip():
                self._start_search()
        elif self._manifest_due is None:
            self._manifest_due = self.set_timer(wait, lambda: self._manifest_timer(rerun_search))

    def _manifest_timer(self, rerun_search: bool) -> None:
        self._manifest_due = None
        self._request_manifest(now=True, rerun_search=rerun_search)

    @work(thread=True, exclusive=True, group="manifest", exit_on_error=False)
    def _load_manifest(self) -> None:
        index = self.index
        if index is None:
            return
        try:
            files = index.keywords.files()
            counts = index.keywords.counts()
        except Exception as error:  # noqa: BLE001 - e.g. the index closed while quitting
            self.post_message(messages.IndexFailed(f"cannot read the manifest: {error}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(messages.ManifestLoaded(files, counts))

    # -- related files ------------------------------------------------------------------------
    def _load_related_for(self, path: str | None, refresh: bool = False) -> None:
        """Load the related files of ``path``; ``refresh``: the same file again, so what the
        sidebar shows stays until the new answer comes."""
        if path is None:
            return
        if self.index is None or not self.semantic_ready:
            note = (
                "Semantic search is unavailable, so related files are too."
                if self.query_model == "failed"
                else "Loading the vector store…"
            )
            self.related.show_related(path, [], note)
            return
        if not (refresh and self.related.source == path):
            self.related.show_loading(path)
        self._related(self.index, path, self._embedding_here())

    def _embedding_here(self) -> bool:
        """Whether this screen's live index is embedding (so a missing vector is coming)."""
        return (
            self.live is not None
            and not self.read_only
            and self.document_model != "failed"
            and self.live.vectors_available
        )

    @work(thread=True, exclusive=True, group="related", exit_on_error=False)
    def _related(self, index: Any, path: str, embedding: bool) -> None:
        from explorer.core.retrieval.related import RelatedError, related_files

        worker = get_current_worker()
        try:
            items = related_files(index, path, RELATED_FILES)
            message = (
                ""
                if items
                else (PENDING_NEIGHBOURS if embedding else "No other file has vectors yet.")
            )
        except RelatedError as error:
            items = []
            text = str(error)
            if "no vector yet" in text:
                message = (
                    PENDING_FILE
                    if embedding
                    else "No vectors yet for this file: embedding is in progress."
                )
            elif "not in the index" in text:
                message = "This file is not in the index."
            else:
                message = text
        except Exception as error:  # noqa: BLE001 - the sidebar says it, the UI stays up
            items, message = [], f"{type(error).__name__}: {error}"
        if not worker.is_cancelled:
            self.post_message(messages.RelatedLoaded(path, items, message))

    def on_related_loaded(self, message: messages.RelatedLoaded) -> None:
        if message.path == self.current_path:
            self.related.show_related(message.path, message.related, message.message)
