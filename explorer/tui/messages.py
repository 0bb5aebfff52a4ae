"""Messages that background work (the live index, workers) posts to the main screen.

Widgets' own messages (``SearchBox.Changed``, ``ResultsList.Opened``...) live with the widgets;
these are the ones that come from threads. High-rate ones (progress) merge with ``can_replace``
so a busy indexer never floods the UI's queue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class IndexOpened(Message):
    """The live index exists (its SQLite store is open); searches may run on ``index``."""

    live: Any
    """The :class:`explorer.core.live.writer.LiveIndex` (or None when it could not be made)."""
    index: Any
    """The :class:`explorer.core.store.index.Index` to search."""
    error: str = ""


@dataclass
class IndexProgress(Message):
    """Where the background indexer is; a newer one replaces an older one still queued."""

    phase: str
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress)


@dataclass
class IndexFilesChanged(Message):
    """The keyword index now reflects these root-relative paths (files or folders)."""

    paths: frozenset[str]
    initial: bool = False


@dataclass
class IndexVectorsReady(Message):
    """Embedding finished for these paths: semantic search and related files see them."""

    paths: frozenset[str]


@dataclass
class IndexFilesEmbedded(Message):
    """These files just became fresh while embedding goes on (what the user looks at first)."""

    paths: frozenset[str]


@dataclass
class IndexModelState(Message):
    """The document model: ``loading``, ``ready`` or ``failed``."""

    state: str
    message: str = ""


@dataclass
class IndexFailed(Message):
    """One line about something that went wrong in the background."""

    message: str


@dataclass
class IndexWriterState(Message):
    """``waiting``: another process writes the index (read-only here); ``writing``: taken over."""

    state: str
    message: str = ""


@dataclass
class IndexVectorsState(Message):
    """The vector store (a Chroma server) stopped or started answering."""

    available: bool
    message: str = ""


@dataclass
class QueryModelReady(Message):
    """The query path (vector store opened, query encoder warm) is ready, or failed."""

    ok: bool
    message: str = ""
    vectors: int = 0
    """How many chunk vectors the store holds."""


@dataclass
class VectorsCounted(Message):
    """How many chunk vectors the store holds now."""

    vectors: int


@dataclass
class ManifestLoaded(Message):
    """A fresh read of the manifest: ``{path: FileRecord}``."""

    files: dict[str, Any]
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class SearchFinished(Message):
    """A search worker's answer."""

    generation: int
    query: str
    """The text as typed (with any ``path:`` filters)."""
    mode: str
    """The mode the user asked for."""
    answered: str
    """The mode that actually produced the results (keyword while the model loads)."""
    response: Any
    """The :class:`explorer.core.retrieval.search.SearchResponse`."""
    seconds: float
    note: str = ""
    rows: list[Any] = field(default_factory=list)
    """The results list's lines per hit, laid out on the worker thread for ``width``."""
    width: int = 0


@dataclass
class SearchFailed(Message):
    """A query that could not be run; ``message`` is for the user."""

    generation: int
    query: str
    message: str


@dataclass
class RelatedLoaded(Message):
    """The related files of ``path`` (``message`` explains an empty answer)."""

    path: str
    related: list[Any]
    message: str = ""
