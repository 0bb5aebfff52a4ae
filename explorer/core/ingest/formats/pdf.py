"""PDF: text per page, sections from the outline, title and keywords from the properties.

Read with pypdfium2 (PDFium, the PDF engine of Chromium; Apache-2.0/BSD-3): of the libraries
measured on 269 real PDFs it is the fastest by far at the same text quality (pypdf and
pdfminer.six were the others; PyMuPDF is AGPL; see ``benchmarks/RESULTS.md``).

The text of each page follows a page-break line (``─── page 3 ───``), so the preview shows where
pages start and a passage never spans two (every chunk carries its 1-based page). Where the PDF
has an outline (bookmarks), each entry is a heading: it is placed on the line of its page that
holds its title (at the top of the page when no line does), so sections have heading paths;
without one, every passage is headed by the document's title. The document information gives
the title, the description (``Subject``) and the tags (``Keywords``); those and the author are
listed atop the text, before page 1, outside every passage.

An encrypted PDF (one that needs a password to open), a damaged one and one without any text
(scanned images) are skipped with that reason. At most ``max_pages`` pages are read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from explorer.core.ingest.documents import SkipReason
from explorer.core.ingest.file_reading import FileRefused
from explorer.core.ingest.formats.contract import Document, DocumentFormat, Limits, Page
from explorer.core.ingest.formats.properties import (
    clean_properties,
    properties_metadata,
    property_lines,
)
from explorer.core.ingest.formats.text_builder import TextBuilder
from explorer.core.ingest.markup import Heading

if TYPE_CHECKING:
    import pypdfium2

MAX_BOOKMARKS = 5_000
"""Outline entries read at most (a hostile outline may hold millions)."""
MAX_OUTLINE_DEPTH = 12
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")
_SOFT_HYPHEN = re.compile(r"\x02(?:\r?\n)?")
"""PDFium marks a word hyphenated across lines with \\x02: the word is joined again."""
_LIGATURES = str.maketrans(
    {
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
    }
)
"""A word set with a ligature (``ﬁ``) is spelled out, so a search for its letters finds it."""


class PdfFormat(DocumentFormat):
    """PDF documents with a text layer."""

    name = "pdf"
    extensions = frozenset({"pdf"})
    extracted = True
    limits = Limits(max_bytes=200_000_000, seconds=60.0, max_pages=2_000, max_chars=20_000_000)
    summary = "text per page (p. N on every passage), sections from the outline, properties"

    def sniff(self, head: bytes) -> bool:
        return head.startswith(b"%PDF-")

    def extract(self, data: bytes, rel_path: str, limits: Limits) -> Document:
        import pypdfium2

        if b"%PDF-" not in data[:1024]:  # the header may follow some junk, says the spec
            raise FileRefused(SkipReason.UNREADABLE, "not a PDF (no %PDF header)")
        try:
            pdf = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError as error:
            raise FileRefused(SkipReason.UNREADABLE, _open_problem(error)) from None
        try:
            return _read(pdf, limits)
        finally:
            pdf.close()

    def preview_language(self, rel_path: str, text: str) -> str | None:
        return None


def _open_problem(error: pypdfium2.PdfiumError) -> str:
    """Why PDFium could not open a document, in a user's words."""
    import pypdfium2.raw as codes

    reason = {
        codes.FPDF_ERR_PASSWORD: "encrypted PDF",
        codes.FPDF_ERR_SECURITY: "encrypted PDF (unsupported security handler)",
        codes.FPDF_ERR_FORMAT: "damaged PDF (not a valid PDF structure)",
        codes.FPDF_ERR_FILE: "damaged PDF (cannot be read)",
    }
    return reason.get(error.err_code or -1, f"unreadable PDF ({error})")


def _read(pdf: pypdfium2.PdfDocument, limits: Limits) -> Document:
    count = len(pdf)
    wanted = min(count, limits.max_pages or count)
    properties = _properties(pdf)
    builder = TextBuilder(limits.max_chars)
    builder.raw(property_lines(properties))
    empty = broken = read = 0
    for index in range(wanted):
        builder.start_page(index + 1)
        text = _page_text(pdf, index)
        if text is None:
            broken += 1
            text = ""
        empty += not text.strip()
        builder.raw(text)
        if builder.full:
            break
        read += 1
    text = builder.text()
    if broken == wanted:
        raise FileRefused(SkipReason.UNREADABLE, "damaged PDF (no page can be loaded)")
    if not any(text[page.start : page.end].strip() for page in builder.pages):
        raise FileRefused(SkipReason.UNREADABLE, "no text layer (scanned images?)")
    notes: list[str] = []
    if builder.full:
        notes.append(f"text cut at {limits.max_chars:,} characters (page {read + 1})")
    elif wanted < count:
        notes.append(f"the first {wanted:,} of {count:,} pages read")
    if broken:
        notes.append(f"{broken} of {read} pages could not be loaded")
    if empty > broken:
        notes.append(f"no text on {empty - broken} of {read} pages")
    pages = tuple(builder.pages[:read])
    headings = _outline_headings(pdf, text, pages)
    return Document(
        text,
        metadata=properties_metadata(properties),
        notes=tuple(notes),
        headings=tuple(headings),
        pages=pages,
    )


def _page_text(pdf: pypdfium2.PdfDocument, index: int) -> str | None:
    """The text of page ``index``, or None when PDFium cannot load it (a damaged page tree)."""
    import pypdfium2

    try:
        page = pdf[index]
    except pypdfium2.PdfiumError:
        return None
    try:
        textpage = page.get_textpage()
        try:
            return _clean(textpage.get_text_bounded())
        finally:
            textpage.close()
    except pypdfium2.PdfiumError:
        return None
    finally:
        page.close()


def _clean(text: str) -> str:
    """A page's text with line breaks as ``\\n``, hyphenated words joined, ligatures spelled
    out, control characters gone and no white space at line ends."""
    text = _SOFT_HYPHEN.sub("", text.replace("\r\n", "\n")).translate(_LIGATURES)
    text = _CONTROL.sub(" ", text)
    # trailing blanks cut line by line (a pattern, [ \t]+$, tried every blank of a long run:
    # 2.5 s for 20,000 of them)
    return "\n".join(line.rstrip(" \t") for line in text.split("\n")).strip("\n")


def _properties(pdf: pypdfium2.PdfDocument) -> dict[str, str]:
    """The document information: title, author, subject, keywords."""
    try:
        return clean_properties(pdf.get_metadata_dict(skip_empty=True))
    except Exception:  # noqa: BLE001 - a damaged information dictionary only loses these fields
        return {}


def _outline_headings(
    pdf: pypdfium2.PdfDocument, text: str, pages: tuple[Page, ...]
) -> list[Heading]:
    """A heading per outline entry on a page that was read, placed on the line that holds its
    title (else at the top of its page), in text order."""
    headings: list[Heading] = []
    floor = 0
    for level, title, index in _outline(pdf, len(pages)):
        page = pages[index]
        start = max(page.start, floor)
        if start > page.end:
            continue  # an entry pointing back before the previous one: out of order, left out
        match = _title_pattern(title).search(text, start, page.end)
        if match is not None:
            line_start = text.rfind("\n", 0, match.start()) + 1
            line_end = text.find("\n", match.end())
            end = len(text) if line_end < 0 else line_end + 1
            headings.append(Heading(max(line_start, start), level, title, min(end, page.end + 1)))
            floor = headings[-1].end
        else:
            headings.append(Heading(start, level, title, start))
            floor = start
    return headings


def _outline(pdf: pypdfium2.PdfDocument, pages_read: int) -> list[tuple[int, str, int]]:
    """(level, title, page index) of the outline entries that point at a page read."""
    entries: list[tuple[int, str, int]] = []
    try:
        for number, bookmark in enumerate(pdf.get_toc(max_depth=MAX_OUTLINE_DEPTH)):
            if number >= MAX_BOOKMARKS:
                break
            title = " ".join(_CONTROL.sub(" ", bookmark.get_title() or "").split())[:300]
            destination = bookmark.get_dest()
            index = destination.get_index() if destination is not None else None
            if title and index is not None and 0 <= index < pages_read:
                entries.append((bookmark.level, title, index))
    except Exception:  # noqa: BLE001 - a damaged outline costs the sections, not the text
        return entries
    return entries


def _title_pattern(title: str) -> re.Pattern[str]:
    """The title's words, any white space between them, case aside."""
    words = [re.escape(word) for word in title.split()[:40]]
    return re.compile(r"\s+".join(words), re.I)
