"""Plain data shared by the core: scanned files, skipped files and chunks.

These are the values that flow from the scanner to the chunker to the stores. They hold no
behaviour beyond small derived properties, so every core module can import them cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from explorer.core.references import FileReference


@dataclass(frozen=True)
class ScannedFile:
    """A file under the root that the index should hold."""

    rel_path: str
    """Path relative to the root, always with forward slashes (``guides/install.md``)."""
    abs_path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class SkippedFile:
    """A file the scanner saw but will not index, with the reason a user can act on."""

    rel_path: str
    reason: str
    """One of ``too-large``, ``binary``, ``undecodable``, ``unreadable``."""
    detail: str = ""


@dataclass
class ScanResult:
    """Everything one walk of a root found."""

    files: list[ScannedFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


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


@dataclass
class ChunkedFile:
    """A file's text split into chunks, plus the metadata parsed from its front matter."""

    chunks: list[Chunk]
    metadata: dict[str, str] = field(default_factory=dict)
    """Front matter ``title``, ``description``, ``tags`` (comma-joined), ``version``."""
    references: list[FileReference] = field(default_factory=list)
    """Links and path mentions to other files, in file order."""
