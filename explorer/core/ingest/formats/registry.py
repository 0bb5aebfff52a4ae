"""The formats explorer reads, one line each, and how a file's format is found.

A file's format is the one that claims its extension (or, for a file without one, its name:
``Makefile``). Content decides where it disagrees with the name: a file whose first bytes say
PDF or DOCX is read as that whatever it is called, and a file called ``.pdf`` that is no PDF
is skipped with that reason when it is read (:mod:`explorer.core.ingest.formats.reading`).
A file no format claims is plain text.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from explorer.core.ingest.extensions import extension_of
from explorer.core.ingest.formats.asciidoc import AsciiDocFormat
from explorer.core.ingest.formats.code import CodeFormat
from explorer.core.ingest.formats.contract import DocumentFormat
from explorer.core.ingest.formats.docx import DocxFormat
from explorer.core.ingest.formats.html import HtmlFormat
from explorer.core.ingest.formats.latex import LatexFormat
from explorer.core.ingest.formats.manpage import ManPageFormat
from explorer.core.ingest.formats.markdown import MarkdownFormat
from explorer.core.ingest.formats.notebook import NotebookFormat
from explorer.core.ingest.formats.pdf import PdfFormat
from explorer.core.ingest.formats.plain_text import PlainTextFormat
from explorer.core.ingest.formats.restructured_text import RestructuredTextFormat

FORMATS: tuple[DocumentFormat, ...] = (
    MarkdownFormat(),
    RestructuredTextFormat(),
    AsciiDocFormat(),
    LatexFormat(),
    HtmlFormat(),
    PdfFormat(),
    DocxFormat(),
    NotebookFormat(),
    ManPageFormat(),
    CodeFormat(),
    PlainTextFormat(),
)
"""Every format, one line each. An extension belongs to one format only."""

PLAIN_TEXT: DocumentFormat = FORMATS[-1]
"""The format of a file no other format claims."""
_BY_EXTENSION = {ext: fmt for fmt in FORMATS for ext in fmt.extensions}
_BY_FILE_NAME = {name: fmt for fmt in FORMATS for name in fmt.file_names}
_BY_NAME = {fmt.name: fmt for fmt in FORMATS}
_SNIFFING = tuple(fmt for fmt in FORMATS if fmt.extracted)

DEFAULT_EXTENSIONS: frozenset[str] = frozenset(_BY_EXTENSION)
"""Every extension a format claims: what the scanner indexes by default."""
DEFAULT_NAMES: frozenset[str] = frozenset(_BY_FILE_NAME)
"""Extension-less file names a format claims (compared case-insensitively)."""


def claimed_format(rel_path: str) -> DocumentFormat | None:
    """The format that claims a path by its extension or name, or None."""
    ext = extension_of(rel_path)
    if ext:
        return _BY_EXTENSION.get(ext)
    return _BY_FILE_NAME.get(PurePosixPath(rel_path).name.lower())


def format_for(rel_path: str) -> DocumentFormat:
    """The format of a path by its name (plain text when none claims it)."""
    return claimed_format(rel_path) or PLAIN_TEXT


def format_named(name: str) -> DocumentFormat:
    """The format called ``name`` (``pdf``); KeyError for an unknown one."""
    return _BY_NAME[name]


def sniffed_format(head: bytes) -> DocumentFormat | None:
    """The extracted format the first bytes of a file say it is (PDF, DOCX), or None."""
    return next((fmt for fmt in _SNIFFING if fmt.sniff(head)), None)


def is_markdown(rel_path: str) -> bool:
    """Whether a path is a Markdown file (its text is Markdown as written)."""
    return isinstance(format_for(rel_path), MarkdownFormat)
