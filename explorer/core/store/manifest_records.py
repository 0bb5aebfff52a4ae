"""The records of the manifest: file states, a file's row, a stored chunk, and how the folder
differs from it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from explorer.core.ingest.documents import EntrySpan
from explorer.core.models import FileState


def entries_json(entries: tuple[EntrySpan, ...]) -> str:
    """A chunk's entries as its row keeps them (``""`` for none: most chunks)."""
    if not entries:
        return ""
    return json.dumps([[e.title, e.start_line, e.end_line] for e in entries], ensure_ascii=False)


def entries_from_json(stored: str) -> tuple[EntrySpan, ...]:
    """The entries :func:`entries_json` kept (none for a row it did not write)."""
    if not stored:
        return ()
    return tuple(EntrySpan(str(t), int(a), int(b)) for t, a, b in json.loads(stored))


@dataclass(frozen=True)
class FileRecord:
    """One manifest row."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    state: FileState
    reason: str
    title: str
    chunk_count: int
    updated_at: float

    @classmethod
    def from_row(
        cls,
        row: tuple[str, int, int, str, str, str, str, int, float],
    ) -> FileRecord:
        """A record from its ``files`` row (columns in field order)."""
        path, size, mtime_ns, content_hash, state, reason, title, chunk_count, updated_at = row
        return cls(
            path,
            size,
            mtime_ns,
            content_hash,
            FileState(state),
            reason,
            title,
            chunk_count,
            updated_at,
        )


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as the index holds it, with its id and file."""

    id: str
    path: str
    ord: int
    heading: str
    start_line: int
    end_line: int
    start_char: int
    end_char: int
    text: str
    title: str = ""
    page: int | None = None
    """1-based page of a passage of a paged document (PDF); None elsewhere."""
    entries: tuple[EntrySpan, ...] = ()
    """The reference entries its lines meet (see :class:`~explorer.core.ingest.documents.
    Chunk`)."""

    @classmethod
    def from_row(
        cls, row: tuple[str, str, int, str, int, int, int, int, str, str, int | None, str]
    ) -> StoredChunk:
        """A chunk from its row: its columns in field order, the entries as kept."""
        cid, path, ordinal, heading, first, last, start, end, text, title, page, entries = row
        return cls(
            cid,
            path,
            ordinal,
            heading,
            first,
            last,
            start,
            end,
            text,
            title,
            page,
            entries_from_json(entries),
        )


@dataclass(frozen=True, slots=True)
class PendingChunk:
    """A chunk waiting for its vector: enough to order it, not its text."""

    id: str
    path: str
    length: int
    """Characters of its text."""


@dataclass(frozen=True)
class FileSummary:
    """What a result shows about its file besides passages: front-matter title and more."""

    title: str
    description: str = ""
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DiskChanges:
    """Files that changed on disk since the manifest last saw them (sorted paths)."""

    edited: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    states: dict[str, FileState] = field(default_factory=dict)
    """The manifest's state of each edited or deleted file (what it was before it went stale)."""
    other_types: dict[str, int] = field(default_factory=dict)
    """Files of the folder no format reads, by extension (``.svg``) or name."""

    @property
    def total(self) -> int:
        return len(self.edited) + len(self.new) + len(self.deleted)
