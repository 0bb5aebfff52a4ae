"""The document a preview shows: its text, how to show it, and where its pages start.

:func:`preview_document` reads a file as the index does and returns plain data a front end
renders (the core stays free of any UI toolkit): a text file's text as it is, an extracted
document's text (a PDF's pages with their page-break lines, an HTML page's readable text), so
the lines a search result names are the lines the preview shows. It runs where the caller runs
(the TUI calls it on a worker thread); an extracted format is read by the extraction worker
process, so a hostile document costs the preview its time cap at most, never a hang.

The file is untrusted: control characters in its text come back escaped (``\\x1b``), its lines
kept.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from explorer.core.ingest.file_reading import (
    BINARY_PROBE_BYTES,
    FileRefused,
    bom_encoding,
    decode_leniently,
    decode_text,
    read_head,
)
from explorer.core.ingest.formats.contract import Document, DocumentFormat, PreviewKind
from explorer.core.ingest.formats.preview_markup import is_image
from explorer.core.ingest.formats.reading import SourceFile, source_of
from explorer.core.ingest.formats.registry import format_for, format_named, sniffed_format
from explorer.core.ingest.formats.sandbox import CancelFlag, ExtractionCancelled, ExtractionPool
from explorer.core.ingest.formats.text_builder import PAGE_BREAK_LINES
from explorer.core.ingest.front_matter import front_matter_end
from explorer.core.ingest.markup import Heading
from explorer.core.safe_text import safe_text

MAX_PREVIEW_BYTES = 8_000_000
"""Read at most this much of a text file (an extracted format: its own size cap)."""


@dataclass(frozen=True)
class OutlineEntry:
    """One entry of a document's outline (a PDF's bookmark, a DOCX or HTML heading)."""

    level: int
    """Smaller is higher (1 at the top)."""
    title: str
    line: int
    """The 1-based line of the text where it stands."""


@dataclass(frozen=True)
class PreviewDocument:
    """What a preview shows of one file."""

    path: str
    kind: PreviewKind
    """How to show :attr:`text`: rendered Markdown, highlighted code, plain text; or only
    :attr:`note` (a binary file, an unreadable document)."""
    text: str = ""
    """The whole text, lines as the index counts them (``\\r\\n`` read as one break)."""
    language: str | None = None
    """The Pygments language to highlight :attr:`text` in (code), or None."""
    body_start: int = 0
    """Where the text to render starts (after a Markdown file's front matter)."""
    page_lines: tuple[int, ...] = ()
    """The 1-based line where each page's text starts (page 1 first); empty without pages."""
    note: str = ""
    """Said beside the text (cut, pages left out), or instead of it."""
    format: str = ""
    """The name of the file's format (``markdown``, ``pdf``)."""
    outline: tuple[OutlineEntry, ...] = ()
    """An extracted document's headings (a PDF's bookmarks), in text order; empty for a text
    format (:func:`text_outline` finds its headings when asked) and for a document without
    any."""

    @property
    def page_count(self) -> int:
        """Pages whose text the preview shows (0: not a paged document)."""
        return len(self.page_lines)

    def page_at(self, line: int) -> int | None:
        """The 1-based page 1-based ``line`` belongs to, its page-break line included (the
        first page for the property lines before it); None without pages."""
        if not self.page_lines:
            return None
        return max(1, bisect_right(self.page_lines, line + PAGE_BREAK_LINES))

    def page_start(self, page: int) -> int | None:
        """The page-break line that opens 1-based ``page``, or None when the document has no
        such page."""
        if not 1 <= page <= len(self.page_lines):
            return None
        return max(1, self.page_lines[page - 1] - PAGE_BREAK_LINES)


def preview_document(
    rel_path: str,
    absolute: Path,
    max_bytes: int = MAX_PREVIEW_BYTES,
    pool: ExtractionPool | None = None,
    cancel: CancelFlag | None = None,
) -> PreviewDocument:
    """The preview of the file ``rel_path`` at ``absolute``; never raises for the file's sake.

    ``cancel`` set (the user opened another file, the app quits) stops a document's
    extraction at once; the answer then only says so."""
    fmt = format_for(rel_path)
    cap = fmt.limits.max_bytes if fmt.extracted and fmt.limits.max_bytes else max_bytes
    try:
        data = read_head(absolute, cap + 1)
    except FileNotFoundError:
        return PreviewDocument(rel_path, PreviewKind.MESSAGE, note="This file no longer exists.")
    except FileRefused as refused:
        note = f"Not a regular file ({refused.detail})."
        return PreviewDocument(rel_path, PreviewKind.MESSAGE, note=note)
    except OSError as error:
        note = f"Cannot read this file: {error.strerror}"
        return PreviewDocument(rel_path, PreviewKind.MESSAGE, note=note)
    truncated = len(data) > cap
    sniffed = None if fmt.extracted else _sniffed(data[:cap])
    if fmt.extracted or sniffed is not None:
        if truncated:
            note = f"Too large to show (over the {cap // 1_000_000} MB cap of its format)."
            return PreviewDocument(rel_path, PreviewKind.MESSAGE, note=note)
        return _extracted(rel_path, data, sniffed or fmt, pool, cancel)
    data = data[:cap]
    if bom_encoding(data) is None and b"\0" in data[:BINARY_PROBE_BYTES]:
        note = image_note(rel_path, absolute) if is_image(rel_path) else ""
        note = note or "Binary file: nothing to preview."
        return PreviewDocument(rel_path, PreviewKind.MESSAGE, note=note)
    text = safe_text(decode_leniently(data).replace("\r\n", "\n"), keep_lines=True)
    note = "truncated: the file is larger than the preview shows" if truncated else ""
    language = fmt.preview_language(rel_path, text)
    kind = fmt.preview_kind
    if kind != PreviewKind.MARKDOWN:
        kind = PreviewKind.CODE if language else PreviewKind.TEXT
    body = front_matter_end(text) if kind == PreviewKind.MARKDOWN else 0
    return PreviewDocument(rel_path, kind, text, language, body, note=note, format=fmt.name)


def text_outline(document: PreviewDocument) -> tuple[OutlineEntry, ...]:
    """The outline of a preview: an extracted document's (:attr:`PreviewDocument.outline`), or
    what a text format finds in its text (a source file's definitions, the sections of LaTeX
    or reStructuredText). Worked out when asked, not as the file is read: a large source takes
    tens of milliseconds to parse (``_pydecimal.py``, 229 KB: 25-35 ms), and the page shows
    first. Markdown's comes from its rendering: none here."""
    if document.outline or not document.text or document.kind == PreviewKind.MARKDOWN:
        return document.outline
    try:
        fmt = format_named(document.format)
    except KeyError:
        return ()
    if fmt.extracted:
        return ()
    return _outline(document.text, fmt.outline(document.path, document.text))


def image_note(rel_path: str, absolute: Path) -> str:
    """What the preview says of an image: its name, type and size, and how to see it."""
    try:
        size = absolute.stat().st_size
    except OSError:
        return ""
    suffix = PurePosixPath(rel_path).suffix.lstrip(".").upper()
    name = PurePosixPath(rel_path).name
    shown = f"{size / 1_000_000:.1f} MB" if size >= 1_000_000 else f"{max(1, size // 1000)} KB"
    return f"Image {name} ({suffix}, {shown}): ctrl+o opens it in the system's image viewer."


def _sniffed(data: bytes) -> DocumentFormat | None:
    """The extracted format of a file named as text whose bytes are no text but a PDF or a
    DOCX (the index reads it so too: :func:`~explorer.core.ingest.formats.reading.source_of`)."""
    found = sniffed_format(data[:BINARY_PROBE_BYTES])
    if found is None:
        return None
    try:
        decode_text(data, legacy=False)
    except FileRefused:
        return found
    return None


def _extracted(
    rel_path: str,
    data: bytes,
    fmt: DocumentFormat,
    pool: ExtractionPool | None,
    cancel: CancelFlag | None,
) -> PreviewDocument:
    source = source_of(rel_path, data, fmt)
    if not isinstance(source, SourceFile):
        reason, detail = source
        note = f"Cannot show this {fmt.name}: {reason}: {detail}"
        return PreviewDocument(rel_path, PreviewKind.MESSAGE, note=note, format=fmt.name)
    try:
        document = source.document(pool, cancel)
    except ExtractionCancelled:
        note = "Reading this document was cancelled."
        return PreviewDocument(rel_path, PreviewKind.MESSAGE, note=note, format=fmt.name)
    except FileRefused as refused:
        note = f"Cannot show this {fmt.name}: {refused.reason}: {refused.detail}"
        return PreviewDocument(rel_path, PreviewKind.MESSAGE, note=note, format=fmt.name)
    text = safe_text(document.text, keep_lines=True)
    language = fmt.preview_language(rel_path, text)
    kind = fmt.preview_kind
    if kind != PreviewKind.MARKDOWN:
        kind = PreviewKind.CODE if language else PreviewKind.TEXT
    return PreviewDocument(
        rel_path,
        kind,
        text,
        language,
        document.body_start if kind == PreviewKind.MARKDOWN else 0,
        page_lines=_page_lines(document),
        note="; ".join(document.notes),
        format=fmt.name,
        outline=_outline(document.text, _with_entries(document.headings or (), document.entries)),
    )


def _page_lines(document: Document) -> tuple[int, ...]:
    text = document.text
    lines: list[int] = []
    line, counted = 1, 0
    for page in document.pages:
        line += text.count("\n", counted, page.start)
        counted = page.start
        lines.append(line)
    return tuple(lines)


def _with_entries(headings: Sequence[Heading], entries: Sequence[Heading]) -> Sequence[Heading]:
    """A document's headings and its reference entries, in text order (a heading first where
    both start alike)."""
    if not entries:
        return headings
    return sorted([*headings, *entries], key=lambda heading: heading.start)


def _outline(text: str, headings: Sequence[Heading]) -> tuple[OutlineEntry, ...]:
    """A document's headings as outline entries, with their lines."""
    entries: list[OutlineEntry] = []
    line, counted = 1, 0
    for heading in headings:
        if heading.start < counted:  # out of order: counted from the start again
            line, counted = 1, 0
        line += text.count("\n", counted, heading.start)
        counted = heading.start
        entries.append(OutlineEntry(heading.level, safe_text(heading.title), line))
    return tuple(entries)
