"""DOCX (Word): heading styles as heading paths, tables as text, core properties as metadata.

Read with python-docx (MIT), which walks the body in order, paragraphs and tables alike, and
names each paragraph's style (docx2python flattens the document into nested lists and loses
the style names that make the headings; python-docx also shares lxml with the HTML format).
A paragraph styled ``Title`` or ``Heading N`` becomes a heading line, ``List …`` styles list
items, a table ``| a | b |`` rows (a merged cell once); hyperlinks to files of the folder are
references. The core properties give the title, the description (``subject``) and the tags
(``keywords``); those and the author are listed atop the text, outside every passage.

A DOCX is a zip: before python-docx opens it, the sizes its entries declare are checked, so a
zip bomb (a few KB that inflate to gigabytes) is refused without inflating anything. Python's
zip reader never inflates an entry past the size it declares.
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import TYPE_CHECKING, ClassVar

from explorer.core.ingest.documents import SkipReason
from explorer.core.ingest.file_reading import FileRefused, human_size
from explorer.core.ingest.formats.contract import Document, DocumentFormat, Limits, PreviewKind
from explorer.core.ingest.formats.properties import (
    clean_properties,
    properties_metadata,
    property_lines,
)
from explorer.core.ingest.formats.text_builder import TextBuilder
from explorer.core.ingest.references import FileReference, ReferenceKind, resolve_target

if TYPE_CHECKING:
    from docx.document import Document as WordDocument
    from docx.table import Table
    from docx.text.paragraph import Paragraph

MAX_UNZIPPED_BYTES = 200_000_000
"""Most bytes a DOCX's entries may declare, all together."""
MAX_ENTRIES = 10_000
_HEADING_STYLE = re.compile(r"heading\s*(\d)", re.I)


class DocxFormat(DocumentFormat):
    """Word documents (Office Open XML)."""

    name = "docx"
    extensions = frozenset({"docx"})
    extracted = True
    limits = Limits(max_bytes=50_000_000, seconds=30.0, max_chars=10_000_000)
    preview_kind = PreviewKind.CODE
    markdown_text: ClassVar[bool] = True
    summary = "heading styles as sections, tables as text, core properties"

    def sniff(self, head: bytes) -> bool:
        return head.startswith(b"PK\x03\x04") and b"word/" in head[:4096]

    def extract(self, data: bytes, rel_path: str, limits: Limits) -> Document:
        _check_zip(data)
        import docx
        from docx.opc.exceptions import PackageNotFoundError

        try:
            word = docx.Document(io.BytesIO(data))
        except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as error:
            raise FileRefused(SkipReason.UNREADABLE, f"not a valid DOCX ({error})") from None
        except Exception as error:  # noqa: BLE001 - lxml's XMLSyntaxError and the like
            raise FileRefused(
                SkipReason.UNREADABLE, f"damaged DOCX ({type(error).__name__}: {error})"
            ) from None
        return _read(word, rel_path, limits)

    def preview_language(self, rel_path: str, text: str) -> str | None:
        return "markdown"


def _check_zip(data: bytes) -> None:
    """Refuse a zip that is not one, holds too many entries, or would inflate too far."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as error:
        raise FileRefused(SkipReason.UNREADABLE, f"not a valid DOCX ({error})") from None
    with archive:
        entries = archive.infolist()
        if len(entries) > MAX_ENTRIES:
            raise FileRefused(SkipReason.UNREADABLE, f"zip of {len(entries):,} entries")
        declared = sum(entry.file_size for entry in entries)
        if declared > MAX_UNZIPPED_BYTES:
            raise FileRefused(
                SkipReason.UNREADABLE,
                f"zip bomb: {human_size(len(data))} inflating to {human_size(declared)}",
            )


def _read(word: WordDocument, rel_path: str, limits: Limits) -> Document:
    from docx.table import Table

    builder = TextBuilder(limits.max_chars)
    references: list[FileReference] = []
    properties = _properties(word)
    builder.raw(property_lines(properties))
    body_start = builder.length
    for block in word.iter_inner_content():
        if builder.full:
            break
        if isinstance(block, Table):
            _table(builder, block)
        else:
            _paragraph(builder, block, rel_path, references)
    text = builder.text()
    notes = (f"text cut at {limits.max_chars:,} characters",) if builder.full else ()
    return Document(
        text,
        metadata=properties_metadata(properties),
        notes=notes,
        body_start=min(body_start, len(text)),
        headings=tuple(builder.headings),
        references=tuple(references),
    )


def _paragraph(
    builder: TextBuilder, paragraph: Paragraph, rel_path: str, references: list[FileReference]
) -> None:
    style = paragraph.style.name if paragraph.style is not None else ""
    style = str(style or "")
    text = paragraph.text
    if style == "Title":
        builder.heading(1, text)
        return
    heading = _HEADING_STYLE.match(style)
    if heading:
        builder.heading(int(heading.group(1)) + 1, text)
        return
    prefix = "- " if style.lower().startswith("list") else ""
    lines = builder.paragraph([text], prefix, " " * len(prefix))
    if lines is None:
        return
    for link in paragraph.hyperlinks:
        address = link.address
        target = resolve_target(rel_path, address) if address else None
        if target is not None:
            references.append(FileReference(lines[0], ReferenceKind.LINK, address, target))


def _table(builder: TextBuilder, table: Table) -> None:
    rows: list[list[str]] = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            if cell._tc is previous:  # a merged cell is listed once per column it spans
                continue
            previous = cell._tc
            cells.append(cell.text)
        rows.append(cells)
    builder.table(rows)


def _properties(word: WordDocument) -> dict[str, str]:
    core = word.core_properties
    return clean_properties(
        {
            "Title": core.title,
            "Author": core.author,
            "Subject": core.subject,
            "Keywords": core.keywords,
        }
    )
