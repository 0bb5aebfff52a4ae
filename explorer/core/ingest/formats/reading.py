"""Reading a file for the index: its format, its content (and hash), then its document.

:func:`load_source` reads a file once, within its format's size cap, and decides its format by
name and content (a ``.md`` that holds a PDF is a PDF; a ``.pdf`` that holds no PDF is skipped
when it is extracted). A text format's bytes are decoded as :func:`~explorer.core.ingest.
file_reading.decode_text` does (a binary or undecodable file is refused, as before formats
existed); an extracted format's bytes are kept for the worker. The content hash is the one an
index stored before formats existed for text (the text's), the bytes' for the others, so an
unchanged file is recognised without being extracted again.

:meth:`SourceFile.document` parses a text format in process and sends an extracted one to the
worker process (:mod:`explorer.core.ingest.formats.sandbox`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from explorer.core.ingest.documents import SkipReason
from explorer.core.ingest.file_reading import (
    BINARY_PROBE_BYTES,
    FileRefused,
    decode_text,
    read_regular_file,
)
from explorer.core.ingest.formats.contract import Document, DocumentFormat
from explorer.core.ingest.formats.registry import format_for, sniffed_format
from explorer.core.ingest.formats.sandbox import CancelFlag, ExtractionPool, shared_pool


def size_cap(rel_path: str, max_file_bytes: int) -> int:
    """The most bytes a file of this name may hold to be read: its format's cap, or the
    index's ``max_file_bytes`` for a text format."""
    return format_for(rel_path).limits.max_bytes or max_file_bytes


@dataclass(frozen=True)
class SourceFile:
    """A file read for the index, before it is parsed."""

    rel_path: str
    format: DocumentFormat
    content_hash: str
    text: str | None = None
    """The decoded text (a text format)."""
    data: bytes | None = None
    """The bytes (an extracted format)."""

    def document(
        self, pool: ExtractionPool | None = None, cancel: CancelFlag | None = None
    ) -> Document:
        """The file as a document; raises :class:`FileRefused` with the reason it cannot be
        read (an encrypted PDF, a zip bomb, a parser that ran out of time), and
        :class:`~explorer.core.ingest.formats.sandbox.ExtractionCancelled` when ``cancel`` is
        set while the worker reads it."""
        if self.text is not None:
            return self.format.from_text(self.rel_path, self.text)
        assert self.data is not None
        fmt = self.format
        return (pool or shared_pool()).extract(fmt, self.data, self.rel_path, fmt.limits, cancel)


def load_source(path: Path, rel_path: str, max_file_bytes: int) -> SourceFile | tuple[str, str]:
    """The file at ``path`` (index key ``rel_path``) read for its format, or ``(reason,
    detail)`` when it cannot be: ``too-large`` (past its format's cap), ``binary``,
    ``undecodable``, ``not-regular``, ``unreadable``."""
    fmt = format_for(rel_path)
    try:
        data = read_regular_file(path, fmt.limits.max_bytes or max_file_bytes)
    except FileRefused as refused:
        return (refused.reason, refused.detail)
    except OSError as error:
        return (SkipReason.UNREADABLE, str(error))
    return source_of(rel_path, data, fmt)


def source_of(
    rel_path: str, data: bytes, fmt: DocumentFormat | None = None
) -> SourceFile | tuple[str, str]:
    """A file's bytes as a :class:`SourceFile` of its format (by name, or by content).

    A file named as text is read as text whenever it decodes as text (so a note that quotes
    ``%PDF-`` stays a note); only bytes that are no text and whose first bytes say PDF or DOCX
    are read as that format.
    """
    fmt = fmt or format_for(rel_path)
    if not fmt.extracted:
        try:
            text = decode_text(data, legacy=False)
        except FileRefused as refused:
            sniffed = sniffed_format(data[:BINARY_PROBE_BYTES])
            if sniffed is not None:
                fmt = sniffed  # a PDF by another name
            else:
                try:
                    text = decode_text(data)  # text in a legacy encoding
                except FileRefused:
                    return (refused.reason, refused.detail)
                return _text_source(rel_path, fmt, text)
        else:
            return _text_source(rel_path, fmt, text)
    return SourceFile(rel_path, fmt, hashlib.sha256(data).hexdigest(), data=data)


def _text_source(rel_path: str, fmt: DocumentFormat, text: str) -> SourceFile:
    content_hash = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return SourceFile(rel_path, fmt, content_hash, text=text)
