"""The records of the manifest: file states, a file's row, a stored chunk."""

from __future__ import annotations

from dataclasses import dataclass, field

PENDING, FRESH, SKIPPED, FAILED = "pending", "fresh", "skipped", "failed"
"""A file's state: keyword-searchable and awaiting vectors, complete, left out, or failed."""


@dataclass(frozen=True)
class FileRecord:
    """One manifest row."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    state: str
    reason: str
    title: str
    chunk_count: int
    updated_at: float


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


@dataclass(frozen=True)
class FileSummary:
    """What a result shows about its file besides passages: front-matter title and more."""

    title: str
    description: str = ""
    tags: list[str] = field(default_factory=list)
