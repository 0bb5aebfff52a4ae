"""The contract every file format meets, and the plain data a format turns a file into.

A :class:`DocumentFormat` says how its files are recognised (extensions, file names, and for
binary formats the first bytes), how a file becomes a :class:`Document` (text with its
structure: front matter, headings, pages, references), how that text is cut into sections for
the chunker, and how the preview shows it. Text formats (Markdown, code, plain text) are
decoded and parsed in the process that indexes; formats that are not plain text (PDF, DOCX,
HTML, notebooks) are *extracted* from their bytes in a separate worker process, with limits
(see :mod:`explorer.core.ingest.formats.sandbox`).

A document's text is what its chunks are cut from, what their lines and offsets count in, and
what the preview shows: for a text format the file's own text, for an extracted one the text
the extraction wrote (headings marked with ``#``, page breaks on lines of their own).
"""

from __future__ import annotations

from abc import ABC
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath
from typing import ClassVar

from explorer.core.ingest.front_matter import FileMetadata
from explorer.core.ingest.markup import Heading, heading_sections
from explorer.core.ingest.references import FileReference, LinkFacts, extract_link_facts
from explorer.core.ingest.windows import Chunker, Section


class PreviewKind(StrEnum):
    """How the preview shows a document."""

    MARKDOWN = "markdown"
    """Rendered as a Markdown document."""
    CODE = "code"
    """Source highlighted in its language."""
    TEXT = "text"
    """Lines as they are."""
    MESSAGE = "message"
    """Nothing to show but a message (a binary file, an unreadable document)."""


@dataclass(frozen=True)
class Limits:
    """What reading one file of a format may cost before it is skipped with a reason."""

    max_bytes: int | None = None
    """Largest file read; None: the index's ``max_file_bytes`` setting (text formats)."""
    seconds: float | None = None
    """Longest extraction, wall time, in the worker process; None: read in process (a text
    format, parsed by linear-time parsers; code parses have their own budget)."""
    max_pages: int | None = None
    """Most pages extracted (the rest are left out, with a note); None: not a paged format."""
    max_chars: int = 20_000_000
    """Most characters of text kept from one file (the rest is left out, with a note)."""


@dataclass(frozen=True)
class Page:
    """Where one page's text stands in a document's text."""

    start: int
    end: int


@dataclass(frozen=True)
class Document:
    """A file as text with structure: what the chunker cuts and the preview shows."""

    text: str
    metadata: FileMetadata = field(default_factory=lambda: FileMetadata())
    """``title``, ``description``, ``tags``, ``version`` (front matter, PDF or DOCX
    properties, an HTML page's ``<title>`` and meta description)."""
    notes: tuple[str, ...] = ()
    """What was dropped, cut or could not be read, one short sentence each."""
    body_start: int = 0
    """Where the text after any front matter (or property lines) starts: never in a chunk."""
    fence_end: int = 0
    """Where a Markdown document's own structure starts (after its front matter's fence, read
    or not)."""
    headings: tuple[Heading, ...] | None = None
    """The headings the extraction found (HTML, DOCX, a PDF's outline), in text order; None
    for a format that finds its structure when it is chunked."""
    pages: tuple[Page, ...] = ()
    """Each page's text, in order (page 1 first); empty for a format without pages."""
    references: tuple[FileReference, ...] | None = None
    """The references the extraction found (an HTML page's links); None: read from the text."""
    entries: tuple[Heading, ...] = ()
    """The entries of a reference page the extraction found under its headings (an API
    manual's functions and classes, a glossary's terms), in text order: the outline lists them
    with the headings; the chunker does not cut at them (a manual holds thousands), but each
    passage knows the entries it holds, so a result can name one. An entry's ``end`` is where
    its definition ends (a class's, after its members)."""


@dataclass
class Structure:
    """How a document is cut: its sections (None: windows over the body), its references and
    the inline ``#tags`` its text holds."""

    sections: list[Section] | None
    references: list[FileReference]
    tags: list[str] = field(default_factory=list)
    """Inline tags (Markdown's ``#tag``), without the ``#``, each once."""


class DocumentFormat(ABC):
    """One file format: recognised, read into a :class:`Document`, cut, previewed.

    Adding a format is a subclass in a module of its own and a line in
    :mod:`explorer.core.ingest.formats.registry`.
    """

    name: ClassVar[str]
    """Short, stable name (``markdown``, ``pdf``): the worker protocol and notes use it."""
    extensions: ClassVar[frozenset[str]]
    """File extensions, lower case, without the dot."""
    file_names: ClassVar[frozenset[str]] = frozenset()
    """Names of files without an extension that are this format (lower case)."""
    extracted: ClassVar[bool] = False
    """True for a format that is not plain text: read from bytes in the worker process."""
    limits: ClassVar[Limits] = Limits()
    preview_kind: ClassVar[PreviewKind] = PreviewKind.TEXT
    markdown_text: ClassVar[bool] = False
    """True when the document's text is Markdown (a Markdown file, a notebook) or written in
    its style (the text extracted from HTML or DOCX: ``#`` headings, ``-`` items, fences)."""
    summary: ClassVar[str] = ""
    """What of the format is read, in a few words (for ``explorer formats`` and the README)."""
    reading: ClassVar[int] = 1
    """How this format reads a file: raised when a change gives other text or structure for
    the same bytes, so that an index made before reads its files of the format again, once (see
    :mod:`explorer.core.indexing.indexer`), and its lines agree with the preview's."""

    def sniff(self, head: bytes) -> bool:
        """Whether the first bytes of a file say it is this format (binary formats)."""
        return False

    def from_text(self, rel_path: str, text: str) -> Document:
        """The document of a text format's decoded text (front matter read where it has one)."""
        return Document(text)

    def extract(self, data: bytes, rel_path: str, limits: Limits) -> Document:
        """The document of an extracted format's bytes; raises ``FileRefused`` (in
        :mod:`explorer.core.ingest.file_reading`) with the reason a file cannot be read.
        Runs in the worker process."""
        raise NotImplementedError(f"{self.name} is read as text")

    def structure(self, rel_path: str, document: Document, chunker: Chunker) -> Structure:
        """Sections and references. By default: the extraction's headings (if any), each
        titled by its path, and the references it found (else mentions in the text)."""
        sections = None
        if document.headings is not None:
            title = document.metadata.get("title", "")
            sections = heading_sections(
                document.text, document.body_start, title, list(document.headings)
            )
        facts = self.link_facts(rel_path, document)
        return Structure(sections, facts.references, facts.tags)

    def link_facts(self, rel_path: str, document: Document) -> LinkFacts:
        """The references of a document, and its inline tags (without chunking it)."""
        if document.references is not None:
            return LinkFacts(list(document.references))
        markdown = self.markdown_text
        return extract_link_facts(rel_path, document.text, document.fence_end, markdown=markdown)

    def outline(self, rel_path: str, text: str) -> Sequence[Heading]:
        """The headings the preview's outline lists for a text format's ``text``: those
        :meth:`from_text` finds (LaTeX, reStructuredText), none by default."""
        return self.from_text(rel_path, text).headings or ()

    def preview_language(self, rel_path: str, text: str) -> str | None:
        """The Pygments language the preview highlights a document's text in, or None for
        plain text. By default the one Pygments picks for the file name."""
        return pygments_language(rel_path, text)


PLAIN_SUFFIXES = frozenset({".txt", ".text", ".log", ".csv", ".tsv", ""})
"""Files the preview never highlights (Pygments would guess at their content)."""


def pygments_language(rel_path: str, text: str) -> str | None:
    """The Pygments language of a file by its name (and first 4 KB), or None for plain text."""
    if PurePosixPath(rel_path).suffix.lower() in PLAIN_SUFFIXES:
        return None
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(rel_path, text[:4096])
    except ClassNotFound:
        return None
    aliases = getattr(lexer, "aliases", None) or []
    return str(aliases[0]) if aliases and aliases[0] != "text" else None


def pages_of(sections: Sequence[Section], pages: Sequence[Page]) -> list[Section]:
    """``sections`` cut at page boundaries: a passage never spans two pages, and what lies
    between pages (the page-break lines) is in none."""
    if not pages:
        return list(sections)
    cut: list[Section] = []
    starts = [page.start for page in pages]
    for section in sections:
        index = max(bisect_right(starts, section.start) - 1, 0)
        while index < len(pages) and pages[index].start < section.end:
            start = max(section.start, pages[index].start)
            end = min(section.end, pages[index].end)
            if start < end:
                cut.append(Section(start, end, section.heading))
            index += 1
    return cut
