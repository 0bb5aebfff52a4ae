"""Split a document's text into chunks that follow its structure and fit the embedding model.

The document's format (see :mod:`explorer.core.ingest.formats`) says where its sections are:
Markdown at its headings, code at its definitions, reStructuredText at its titles, HTML and
DOCX at the headings their extraction found, a PDF at its outline's entries and its pages, and
anything else nowhere (token windows that prefer paragraph breaks). A section longer than
``max_tokens`` is split further (a class at its methods, a namespace at its classes) and, when
still too long, into overlapping windows cut at line boundaries. A paged document's sections
are cut at page boundaries, so every chunk is on one page, and carries it.

Every chunk's text is ``text[start_char:end_char]`` of the document's text (front matter
included in the offsets but never in a chunk), so a hit can be shown exactly where it stands.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import replace

from explorer.core.ingest.documents import Chunk, ChunkedFile, EntrySpan
from explorer.core.ingest.formats import Document, DocumentFormat, format_for, pages_of
from explorer.core.ingest.front_matter import parse_front_matter, with_inline_tags
from explorer.core.ingest.markup import Heading
from explorer.core.ingest.windows import Chunker, Section, TokenSpans

__all__ = ["chunk_document", "chunk_file", "parse_front_matter"]


def chunk_file(
    rel_path: str,
    text: str,
    token_spans: TokenSpans,
    max_tokens: int = 240,
    overlap_tokens: int = 32,
) -> ChunkedFile:
    """Split ``text`` (the file at ``rel_path``) into chunks of at most ``max_tokens`` tokens.

    The format follows the name of ``rel_path``; a format that is not plain text (HTML) is
    extracted from ``text`` here, in process (the indexer extracts in a worker process and
    calls :func:`chunk_document`). See :func:`chunk_document` for the rest.
    """
    fmt = format_for(rel_path)
    return chunk_document(
        rel_path, fmt, _document(fmt, rel_path, text), token_spans, max_tokens, overlap_tokens
    )


def chunk_document(
    rel_path: str,
    fmt: DocumentFormat,
    document: Document,
    token_spans: TokenSpans,
    max_tokens: int = 240,
    overlap_tokens: int = 32,
) -> ChunkedFile:
    """Split a document (the file at ``rel_path``, of format ``fmt``) into chunks of at most
    ``max_tokens`` tokens.

    Windows of a long section overlap by ``overlap_tokens`` tokens (at most half a window).
    Chunks come in text order, hold ``document.text[start_char:end_char]``, never include front
    matter (its fields are the metadata), and carry their page in a paged document. The
    references the file makes to others (links, path mentions) come along.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    overlap = max(0, min(overlap_tokens, max_tokens // 2))
    text = document.text
    chunker = Chunker(text, token_spans, max_tokens, overlap)
    structure = fmt.structure(rel_path, document, chunker)
    sections = structure.sections or [Section(document.body_start, len(text), "")]
    for section in pages_of(sections, document.pages):
        chunker.add(section)
    chunks = chunker.chunks
    if document.pages:
        starts = [page.start for page in document.pages]
        chunks = [
            replace(chunk, page=max(bisect_right(starts, chunk.start_char), 1)) for chunk in chunks
        ]
    if document.entries:
        chunks = _with_entries(chunks, _entry_spans(chunker, document.entries))
    return ChunkedFile(
        chunks=chunks,
        metadata=with_inline_tags(document.metadata, structure.tags),
        references=structure.references,
        notes=list(document.notes),
    )


def _entry_spans(chunker: Chunker, entries: Sequence[Heading]) -> list[EntrySpan]:
    """A reference page's entries as the lines they span, in text order."""
    starts = chunker.line_starts
    return [
        EntrySpan(
            entry.title,
            bisect_right(starts, entry.start),
            bisect_right(starts, max(entry.start, entry.end - 1)),
        )
        for entry in entries
    ]


def _with_entries(chunks: list[Chunk], spans: list[EntrySpan]) -> list[Chunk]:
    """Each chunk with the entries whose lines meet its own: one sweep down the page (a
    manual's page holds hundreds), keeping the entries begun and not yet ended."""
    spans.sort(key=lambda span: span.start_line)
    upcoming, active, out = 0, list[EntrySpan](), []
    for chunk in chunks:
        while upcoming < len(spans) and spans[upcoming].start_line <= chunk.end_line:
            active.append(spans[upcoming])
            upcoming += 1
        active = [span for span in active if span.end_line >= chunk.start_line]
        out.append(replace(chunk, entries=tuple(active)) if active else chunk)
    return out


def _document(fmt: DocumentFormat, rel_path: str, text: str) -> Document:
    if fmt.extracted:
        return fmt.extract(text.encode("utf-8", "surrogatepass"), rel_path, fmt.limits)
    return fmt.from_text(rel_path, text)
