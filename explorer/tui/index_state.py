"""What the UI knows about its index, as one value: the status bar shows it, the screen keeps it.

:class:`IndexState` is immutable; the screen makes a new one (``dataclasses.replace``) for each
event of the live index or answer of a loading worker and hands it to the widgets that show or
use it. Its :meth:`IndexState.summary` is the status bar's index text. A window on several
folders keeps one state per folder's live index and shows them folded into one
(:func:`combined`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from explorer.core.live.events import ModelState, ProgressEvent
from explorer.core.models import FileState, SyncPhase

READ_ONLY_TEXT = "read-only (another process is writing this index)"


@dataclass(frozen=True)
class IndexState:
    """The index as the UI sees it."""

    opened: bool = False
    """The live index exists and searches may run."""
    error: str = ""
    """Why the index could not be opened (then nothing else changes)."""
    progress: ProgressEvent | None = None
    """The background indexer's last progress (None before any)."""
    counts: Mapping[str, int] = field(default_factory=dict)
    """The last manifest read: files by state, ``chunks`` and ``embedded``."""
    read_only: bool = False
    """Another process writes this index; this one only reads."""
    query_model: ModelState = ModelState.UNLOADED
    """The query path: the vector store opened and the query encoder warm (``UNLOADED``
    until the index opens)."""
    document_model: ModelState | None = None
    """The live index's document model (None until it says)."""
    vectors_available: bool = True
    """The vector store answers (a Chroma server may stop)."""
    vectors: int = 0
    """How many chunk vectors the store holds (last count)."""
    root_missing: str = ""
    """Why the root is missing (deleted or moved; the live index waits for it), else empty."""

    @property
    def syncing(self) -> bool:
        """The live index has not said its sync is done: it is scanning, indexing words or
        embedding (or about to: it starts a sync when it opens, before its first progress)."""
        return self.progress is None or self.progress.phase is not SyncPhase.DONE

    @property
    def semantic_ready(self) -> bool:
        """Searches by meaning can run."""
        return self.query_model is ModelState.READY

    @property
    def model(self) -> ModelState:
        """Both models as one state: failed if either failed, else loading until both are
        ready (``UNLOADED`` before the index opens: nothing is loading yet)."""
        if not self.opened and self.query_model is ModelState.UNLOADED:
            return ModelState.UNLOADED
        states = (self.query_model, self.document_model or ModelState.READY)
        if ModelState.FAILED in states:
            return ModelState.FAILED
        if ModelState.LOADING in states or ModelState.UNLOADED in states:
            return ModelState.LOADING
        return ModelState.READY

    @property
    def files(self) -> int:
        """Indexed files (fresh or waiting for vectors)."""
        return self.counts.get(FileState.FRESH, 0) + self.counts.get(FileState.PENDING, 0)

    def summary(self) -> str:
        """One line for the status bar: progress while indexing, else the counts."""
        progress = self.progress
        phase = progress.phase if progress is not None else SyncPhase.DONE
        if self.error:
            return self.error
        if self.root_missing:
            return self.root_missing
        if self.read_only:
            return READ_ONLY_TEXT
        if self.document_model is ModelState.LOADING and phase is not SyncPhase.EMBED:
            waiting = self.counts.get("chunks", 0) - self.counts.get("embedded", 0)
            return f"{self.files} files · embedding {waiting} chunks once the model has loaded"
        if progress is None or phase is SyncPhase.DONE:
            return self._counts_text()
        if phase is SyncPhase.SCAN:
            return "scanning files…"
        if phase is SyncPhase.KEYWORDS:
            return f"indexing {progress.files_done}/{progress.files_total} files"
        if phase is SyncPhase.EMBED:
            percent = 100 * progress.chunks_done // max(1, progress.chunks_total)
            left = time_left(progress.seconds_left)
            return (
                f"{self.files} files · embedding {progress.chunks_done}/{progress.chunks_total} "
                f"chunks ({percent}%{', ' + left if left else ''})"
            )
        return self._counts_text()

    def _counts_text(self) -> str:
        counts = self.counts
        if not counts:
            return "reading index…" if self.opened else "opening index…"
        text = f"{self.files} files · {counts.get('chunks', 0)} chunks"
        extra = [
            f"{counts[state]} {state}"
            for state in (FileState.PENDING, FileState.SKIPPED, FileState.FAILED)
            if counts.get(state)
        ]
        return text + (f" ({', '.join(extra)})" if extra else "")


def time_left(seconds: float | None) -> str:
    """``about 12 min left`` (empty while unknown): rounded as a person would say it."""
    if seconds is None:
        return ""
    if seconds < 60:
        return "under a minute left"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"about {minutes} min left"
    return f"about {seconds / 3600:.1f} h left"


FOLDER_FIELDS = (
    "opened",
    "error",
    "progress",
    "read_only",
    "document_model",
    "vectors_available",
    "root_missing",
)
"""The fields of :class:`IndexState` each folder's live index sets (the others, the query path
and the manifest's counts, are the window's: one query encoder and one tree serve every
folder)."""


def combined(shown: IndexState, folders: Mapping[str, IndexState]) -> IndexState:
    """``shown`` with the folder fields of ``folders`` (by collection name) folded into one:
    open once any folder is open; an error only when none opened; the progress of a folder
    still at work; read-only, a missing root or unavailable vectors as soon as one folder is;
    the document model failed or loading as soon as one is. With several folders, the folder
    that says something names itself."""
    states = list(folders.items())
    if not states:
        return shown
    named = len(states) > 1

    def said(name: str, text: str) -> str:
        return f"{name}: {text}" if named and text else text

    working = [state.progress for _, state in states if _at_work(state.progress)]
    reported = [state.progress for _, state in states if state.progress is not None]
    models = [state.document_model for _, state in states if state.document_model is not None]
    document_model = None
    for level in (ModelState.FAILED, ModelState.LOADING, ModelState.UNLOADED, ModelState.READY):
        if level in models:
            document_model = level
            break
    opened = any(state.opened for _, state in states)
    errors = [said(name, state.error) for name, state in states if state.error]
    missing = [said(name, state.root_missing) for name, state in states if state.root_missing]
    return replace(
        shown,
        opened=opened,
        error="" if opened else "; ".join(errors),
        progress=(working or reported or [None])[0],
        read_only=any(state.read_only for _, state in states),
        document_model=document_model,
        vectors_available=all(state.vectors_available for _, state in states),
        root_missing=missing[0] if missing else "",
    )


def _at_work(progress: ProgressEvent | None) -> bool:
    return progress is not None and progress.phase is not SyncPhase.DONE
