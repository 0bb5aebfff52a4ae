"""Plain data shared by the core: scanned files, skipped files and chunks.

These are the values that flow from the scanner to the chunker to the stores. They hold no
behaviour beyond small derived properties, so every core module can import them cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from explorer.core.ingest.front_matter import FileMetadata
from explorer.core.ingest.references import FileReference


class SkipReason(StrEnum):
    """Why a file under the root is not indexed; ``status`` counts files by these."""

    TOO_LARGE = "too-large"
    """Larger than ``max_file_bytes``."""
    BINARY = "binary"
    """A NUL byte early in the file."""
    UNDECODABLE = "undecodable"
    """Neither UTF-8 nor UTF-16/32 with a byte-order mark."""
    UNREADABLE = "unreadable"
    """Cannot be opened or read (permissions, a dangling link, gone mid-scan)."""
    OUTSIDE_ROOT = "outside-root"
    """A symbolic link to a file outside the root (see the ``allow_links_outside`` setting)."""
    NOT_REGULAR = "not-regular"
    """A named pipe, a device or a socket where a file was expected (e.g. a ``.gitignore``)."""


@dataclass(frozen=True)
class ScannedFile:
    """A file under the root that the index should hold."""

    rel_path: str
    """Path relative to the root, always with forward slashes (``guides/install.md``); a name
    that is not UTF-8 is spelled with ``\\xNN`` escapes (see
    :mod:`explorer.core.ingest.root_paths`)."""
    abs_path: Path
    """The file on disk (its real, byte-exact name)."""
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class SkippedFile:
    """A file the scanner saw but will not index, with the reason a user can act on."""

    rel_path: str
    reason: SkipReason
    detail: str = ""

    @property
    def manifest_reason(self) -> str:
        """The reason as the manifest stores it: ``reason: detail``."""
        return f"{self.reason}: {self.detail}" if self.detail else str(self.reason)


@dataclass
class ScanResult:
    """Everything one walk of a root found."""

    files: list[ScannedFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    cancelled: bool = False
    """True when the walk was stopped early: the lists are then incomplete."""
    other_types: dict[str, int] = field(default_factory=dict)
    """Files no format reads, by extension (``.svg``) or name, when the walk was asked to count
    them: files the folder holds that the index leaves out for their type alone."""


@dataclass(frozen=True)
class EntrySpan:
    """An entry of a reference page (an API manual's function, class or option) as lines."""

    title: str
    start_line: int
    """1-based line of its term (the signature)."""
    end_line: int
    """1-based line where its definition ends (inclusive)."""

    def holds(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line


@dataclass(frozen=True)
class Chunk:
    """A passage of a file: the unit that is searched, embedded and shown."""

    text: str
    """The passage exactly as it stands in the file (``file_text[start_char:end_char]``)."""
    heading_path: str
    """Where the passage sits, e.g. ``Install > Linux``; may be empty."""
    start_line: int
    """1-based line of the first character."""
    end_line: int
    """1-based line of the last character (inclusive)."""
    start_char: int
    end_char: int
    page: int | None = None
    """1-based page the passage is on, in a paged document (PDF); None elsewhere."""
    entries: tuple[EntrySpan, ...] = ()
    """The entries whose lines meet the passage's, in text order (one begun above it
    included): what names the entry a match stands in."""


def entry_at(entries: tuple[EntrySpan, ...], line: int) -> EntrySpan | None:
    """The innermost of ``entries`` (in text order) holding ``line``: a class's member rather
    than the class."""
    held = [entry for entry in entries if entry.holds(line)]
    return held[-1] if held else None


@dataclass
class ChunkedFile:
    """A file's text split into chunks, plus the metadata parsed from its front matter."""

    chunks: list[Chunk]
    metadata: FileMetadata = field(default_factory=lambda: FileMetadata())
    """Front matter ``title``, ``description``, ``tags``, ``version``."""
    references: list[FileReference] = field(default_factory=list)
    """Links and path mentions to other files, in file order."""
    notes: list[str] = field(default_factory=list)
    """What of the front matter was dropped or cut (an alias bomb, a mapping as a title…)."""
