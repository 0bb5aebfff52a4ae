"""What a sync reports: its progress while it runs, its summary when it ends, and chunk ids."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from explorer.core.models import SyncPhase


@dataclass
class Progress:
    """Where a sync is; sent to the progress callback many times a second at most."""

    phase: SyncPhase
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    seconds_left: float | None = None
    """While embedding: the time left at the rate so far (None until it can be told)."""


@dataclass
class IndexReport:
    """What one sync did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    failed: int = 0
    failures: dict[str, str] = field(default_factory=dict)
    """Why each failed file failed (path -> reason): its content made a parser fail. A failed
    file is read again by every sync, so a fixed parser (or file) takes it in."""
    chunks_written: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    """Chunks whose vectors the store already held (another checkout, or an interrupted run)."""
    chunks_moved: int = 0
    """Chunks whose vectors were taken from the index's local store as it moved to a server
    (uploaded, not embedded again)."""
    orphans_removed: int = 0
    files_restored: int = 0
    """Files indexed again because their chunks were missing from the database (deleted
    behind explorer's back); their vectors are reused."""
    vectors_lost: int = 0
    """Chunks recorded as embedded whose vectors the store no longer held: embedded again."""
    tightened: list[str] = field(default_factory=list)
    """Files and folders of the index that other users could read until this run made them
    private (``index.sqlite 0644``)."""
    cancelled: bool = False
    vectors_unavailable: str = ""
    """Why the vector store could not be reached after a keyword-only sync (else empty)."""
    keyword_seconds: float = 0.0
    model_seconds: float = 0.0
    """Time spent loading the model before the first batch (not counted in embed_seconds)."""
    embed_seconds: float = 0.0

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed


ProgressCallback = Callable[[Progress], None]


def chunk_id(path: str, content_hash: str, ordinal: int) -> str:
    """A chunk's id: the same path and content give the same ids on any machine."""
    return hashlib.sha256(f"{path}\0{content_hash}\0{ordinal}".encode()).hexdigest()[:32]
