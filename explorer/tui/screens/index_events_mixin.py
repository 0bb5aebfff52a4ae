"""MainScreen's handlers for what the live index and the loading workers report, and the
status bar's index and model text they keep up to date.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from textual.message_pump import MessagePump

from explorer.tui import messages
from explorer.tui.screens.loading_workers_mixin import RELATED_FILES

FOLLOW_EMBEDDED_INTERVAL = 1.0
"""Least seconds between two refreshes (related files, search) for files embedded meanwhile."""


class IndexEventsMixin(MessagePump):
    """Reacts to index, model, vector and manifest messages; mixed into MainScreen."""

    # -- the index ----------------------------------------------------------------------------
    def on_index_opened(self, message: messages.IndexOpened) -> None:
        if message.index is None:
            self.status.set_index(message.error)
            self.notify(message.error, severity="error", timeout=10)
            return
        self.index = message.index
        self.live = message.live
        self.status.set_index("scanning…")
        self.send_focus()
        self._load_manifest()
        self.status.set_model("loading")
        self.query_model = "loading"
        self._warm_query_model(self.index)
        if self._query.strip():
            self._start_search()
        if self.current_path is not None:
            self.links.load(self.index, self.current_path)

    def on_index_progress(self, message: messages.IndexProgress) -> None:
        self.progress = message
        self._show_index_state()
        if message.phase == "keywords":
            self._request_manifest(rerun_search=True)

    def on_index_files_changed(self, message: messages.IndexFilesChanged) -> None:
        self._request_manifest(now=True)
        if self._query.strip():
            self._start_search()
        current = self.current_path
        if current is not None:  # its backlinks may come from any changed file
            self.links.load(self.index, current)
        if current is not None and _touches(message.paths, current):
            absolute = self.file_on_disk(current)
            if absolute is not None:
                self.preview.reload(absolute)
            self._load_related_for(current)
        elif self.related.items and any(
            _touches(message.paths, item.path) for item in self.related.items
        ):
            self._load_related_for(self.current_path)

    def on_index_vectors_ready(self, message: messages.IndexVectorsReady) -> None:
        self._request_manifest(now=True)
        if self.semantic_ready:
            self._count_vectors()
        self._follow_new_vectors()

    def on_index_files_embedded(self, message: messages.IndexFilesEmbedded) -> None:
        """Files became fresh while embedding goes on: the open file's related list and the
        results' semantic scores follow, at most every :data:`FOLLOW_EMBEDDED_INTERVAL`."""
        self._embedded_since |= message.paths
        wait = self._embedded_at + FOLLOW_EMBEDDED_INTERVAL - time.monotonic()
        if wait <= 0:
            self._follow_embedded()
        elif self._embedded_due is None:
            self._embedded_due = self.set_timer(wait, self._follow_embedded)

    def _follow_embedded(self) -> None:
        self._embedded_due = None
        self._embedded_at = time.monotonic()
        paths, self._embedded_since = self._embedded_since, set()
        if not paths:
            return
        self._request_manifest()
        current = self.current_path
        if current is not None and (
            current in paths
            or self.related.state != "ready"
            or any(item.path in paths for item in self.related.items)
            or len(self.related.items) < RELATED_FILES
        ):
            self._load_related_for(current, refresh=True)
        if (
            self._query.strip()
            and self._mode != "keyword"
            and self.semantic_ready
            and (
                self.results.shown_mode == "keyword"
                or any(hit.path in paths for hit in self.results.hits)
            )
        ):
            self._start_search()  # the list refines in place; the highlight stays on its file

    def _follow_new_vectors(self) -> None:
        """More vectors, or the query model, are ready: search by meaning again (a keyword-only
        search has nothing new to show) and recompute the related files."""
        if self._query.strip() and self._mode != "keyword":
            self._start_search()
        if self.current_path is not None:
            self._load_related_for(self.current_path)

    def on_index_model_state(self, message: messages.IndexModelState) -> None:
        self.document_model = message.state
        if message.state == "failed":
            self.notify(message.message, title="Model", severity="warning", timeout=8)
        self._show_model_state()
        self._show_index_state()

    def on_index_writer_state(self, message: messages.IndexWriterState) -> None:
        self.read_only = message.state == "waiting"
        self.notify(message.message, title="Index", timeout=8)
        self._show_index_state()

    def on_index_vectors_state(self, message: messages.IndexVectorsState) -> None:
        self.status.set_vectors(message.available)
        self.notify(
            message.message,
            title="Vectors",
            severity="information" if message.available else "warning",
            timeout=8,
        )
        if message.available and not self.semantic_ready and self.index is not None:
            self._warm_query_model(self.index)
        elif self._query.strip() and self._mode != "keyword":
            self._start_search()
        if message.available and self.current_path is not None:
            self._load_related_for(self.current_path)

    def on_index_failed(self, message: messages.IndexFailed) -> None:
        if self.live is not None and getattr(self.live, "read_only", False):
            self.read_only = True
        self.notify(message.message, title="Index", severity="warning", timeout=8)
        self._show_index_state()

    def on_query_model_ready(self, message: messages.QueryModelReady) -> None:
        self.query_model = "ready" if message.ok else "failed"
        self.semantic_ready = message.ok
        self.vector_count = message.vectors
        if not message.ok:
            self.notify(
                f"semantic search unavailable: {message.message}", severity="warning", timeout=8
            )
        self._show_model_state()
        self._follow_new_vectors()

    def on_manifest_loaded(self, message: messages.ManifestLoaded) -> None:
        self.files = message.files
        self.counts = message.counts
        self.tree.set_files(message.files)
        self._show_index_state()

    def on_vectors_counted(self, message: messages.VectorsCounted) -> None:
        self.vector_count = message.vectors

    def _show_index_state(self) -> None:
        progress = self.progress
        if self.read_only:
            text = "read-only (another process is writing this index)"
        elif self.document_model == "loading" and (progress is None or progress.phase != "embed"):
            files = sum(self.counts.get(state, 0) for state in ("fresh", "pending"))
            waiting = self.counts.get("chunks", 0) - self.counts.get("embedded", 0)
            text = f"{files} files · embedding {waiting} chunks once the model has loaded"
        elif progress is None or progress.phase == "done":
            text = self._counts_text()
        elif progress.phase == "scan":
            text = "scanning files…"
        elif progress.phase == "keywords":
            text = f"indexing {progress.files_done}/{progress.files_total} files"
        elif progress.phase == "embed":
            total = max(1, progress.chunks_total)
            percent = 100 * progress.chunks_done // total
            files = sum(self.counts.get(state, 0) for state in ("fresh", "pending"))
            text = (
                f"{files} files · embedding {progress.chunks_done}/{progress.chunks_total} "
                f"chunks ({percent}%)"
            )
        else:
            text = self._counts_text()
        self.status.set_index(text)

    def _counts_text(self) -> str:
        counts = self.counts
        if not counts:
            return "opening index…" if self.index is None else "reading index…"
        files = sum(counts.get(state, 0) for state in ("fresh", "pending"))
        text = f"{files} files · {counts.get('chunks', 0)} chunks"
        extra = []
        if counts.get("pending"):
            extra.append(f"{counts['pending']} pending")
        if counts.get("skipped"):
            extra.append(f"{counts['skipped']} skipped")
        if counts.get("failed"):
            extra.append(f"{counts['failed']} failed")
        return text + (f" ({', '.join(extra)})" if extra else "")

    def _show_model_state(self) -> None:
        states = (self.query_model, self.document_model)
        if "failed" in states:
            state = "failed"
        elif "loading" in states or "waiting" in states:
            state = "loading"
        else:
            state = "ready"
        self.status.set_model(state)


def _touches(paths: Iterable[str], path: str) -> bool:
    """Whether a change reported for ``paths`` (files or folders) may concern ``path``."""
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in paths)
