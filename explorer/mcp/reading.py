"""Reading files of the root for an agent: one file's lines, a file whole, several within a
budget.

Only what the index would take is readable: a path resolved inside the root
(:mod:`explorer.core.ingest.safe_paths`: no absolute paths, no ``..``, no symbolic link out of
it), a file the scan rules accept (not hidden, ignored or of an unknown kind, so ``.env`` and
``.git/config`` stay closed), read as the indexer reads it
(:func:`~explorer.core.ingest.formats.reading.load_source`): within its format's size cap, its
format told by name and content, a PDF, DOCX, HTML page or notebook as the text the index
extracted from it (a PDF's pages with their page-break lines), so every file a search returns
is readable and the lines a result names are the lines ``read`` gives. A file the index cannot
take is refused with the indexer's reason (``too-large``, ``binary``, a zip bomb).

Lines are counted as the index counts them, at ``\\n`` only: a form feed or a lone ``\\r`` in a
line does not start a new one, so a search result's ``start_line`` is the line ``read`` gives.
An answer holds at most :data:`MAX_READ_CHARS` characters; a longer range goes on at
``next_start_line``, and a line longer than that on ``next_start_char`` within it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from explorer.api.answers import ReadAnswer
from explorer.core.errors import ExplorerError
from explorer.core.indexing.disk_state import scan_rules
from explorer.core.ingest.file_reading import FileRefused
from explorer.core.ingest.formats.reading import SourceFile, load_source
from explorer.core.ingest.safe_paths import resolve_inside
from explorer.core.settings import IndexSettings

MAX_READ_CHARS = 60_000
"""The most characters one ``read`` answer holds."""
EXTRACTED_KEPT = 8
"""Extracted documents kept between reads: an agent pages through a long PDF with one ``read``
per range, and each would otherwise extract the whole document again."""


class Unreadable(ExplorerError):
    """A file an agent may not, or cannot, read through the server; the message says why."""


@dataclass(frozen=True)
class FileText:
    """A readable file's path and text."""

    path: str
    text: str


def load_file(settings: IndexSettings, requested: str) -> FileText:
    """The text of ``requested`` (relative to the root) as the index reads it, or
    :class:`Unreadable` saying why not (in the indexer's words: ``too-large``, ``binary``, a
    zip bomb)."""
    inside = resolve_inside(settings.root, requested)
    rel_path = inside.rel_path
    if not scan_rules(settings).accepts(rel_path):
        raise Unreadable(
            f"{rel_path}: not a file explorer indexes (hidden, ignored or of an unknown kind); "
            "read it with your own tools if you must"
        )
    if not inside.real_path.is_file():
        raise Unreadable(f"{rel_path}: no such file")
    stat = inside.real_path.stat()
    key = (inside.real_path, stat.st_size, stat.st_mtime_ns)
    text = _EXTRACTED.get(key)
    if text is not None:
        return FileText(rel_path, text)
    # Read as the indexer reads it: within its format's cap (an HTML page, a notebook or a PDF
    # may be larger than max_file_bytes), its format decided by name and content (a PDF named
    # .md is a PDF), an extracted format's text from the extraction worker under its limits.
    source = load_source(inside.real_path, rel_path, settings.max_file_bytes)
    if not isinstance(source, SourceFile):
        reason, detail = source
        raise Unreadable(f"{rel_path}: {reason} ({detail}); the index leaves it out too")
    if source.text is not None:
        return FileText(rel_path, source.text)
    try:
        document = source.document()
    except FileRefused as refused:
        raise Unreadable(
            f"{rel_path}: {refused.detail} ({source.format.name}, {refused.reason}); "
            "the index leaves it out too"
        ) from None
    if not document.text:
        raise Unreadable(f"{rel_path}: no text to read in this {source.format.name}")
    _EXTRACTED.put(key, document.text)
    return FileText(rel_path, document.text)


class _ExtractedTexts:
    """The texts of the documents extracted last, by (real path, size, mtime): a document
    changed on disk is extracted again. Shared by the server's request threads."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._texts: OrderedDict[tuple[Path, int, int], str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Path, int, int]) -> str | None:
        with self._lock:
            text = self._texts.get(key)
            if text is not None:
                self._texts.move_to_end(key)
            return text

    def put(self, key: tuple[Path, int, int], text: str) -> None:
        with self._lock:
            self._texts[key] = text
            self._texts.move_to_end(key)
            while len(self._texts) > self._kept:
                self._texts.popitem(last=False)


_EXTRACTED = _ExtractedTexts(EXTRACTED_KEPT)


def lines_of(text: str) -> list[str]:
    """``text`` cut after each ``\\n`` (each line keeps its end), as the index counts lines."""
    lines = text.split("\n")
    ended = [line + "\n" for line in lines[:-1]]
    return ended + [lines[-1]] if lines[-1] else ended


def read_range(
    file: FileText,
    start_line: int | None,
    end_line: int | None,
    start_char: int = 0,
    max_chars: int = MAX_READ_CHARS,
) -> ReadAnswer:
    """Lines ``start_line``..``end_line`` of ``file`` (1-based, inclusive; the first from
    ``start_char`` on), at most ``max_chars`` characters of them.

    A line is cut only when it alone is longer than what is left of ``max_chars`` and nothing
    came before it in this answer; otherwise the answer ends before it.
    """
    lines = lines_of(file.text)
    total = len(lines)
    first = 1 if start_line is None else start_line
    last = total if end_line is None else min(end_line, total)
    if end_line is not None and end_line < first:
        raise Unreadable("end_line must be at least start_line")
    if first > max(total, 1):
        raise Unreadable(f"{file.path} has {total} lines; start_line {first} is past the end")
    if start_char and (first > total or start_char >= len(lines[first - 1])):
        length = len(lines[first - 1]) if first <= total else 0
        raise Unreadable(
            f"line {first} of {file.path} has {length} characters; start_char {start_char} "
            "is past its end"
        )
    chosen: list[str] = []
    size, line, char = 0, first, start_char
    next_char: int | None = None
    while line <= last:
        piece = lines[line - 1][char:]
        room = max_chars - size
        if len(piece) <= room:
            chosen.append(piece)
            size += len(piece)
            line, char = line + 1, 0
            continue
        if not chosen:  # one line longer than an answer: its first part, and where it goes on
            chosen.append(piece[:room])
            next_char = char + room
        break
    truncated = line <= last
    return ReadAnswer(
        path=file.path,
        start_line=first,
        end_line=line if next_char is not None else line - 1,
        total_lines=total,
        start_char=start_char or None,
        text="".join(chosen),
        truncated=truncated,
        next_start_line=line if truncated else None,
        next_start_char=next_char,
    )
