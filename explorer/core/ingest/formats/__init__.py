"""The formats explorer reads: one contract, one module per format, one registry.

:mod:`~explorer.core.ingest.formats.contract` is the contract (how a format is recognised, how a
file becomes a :class:`Document` with sections, pages, metadata and references, how the preview
shows it); :mod:`~explorer.core.ingest.formats.registry` lists the formats, one line each.
Everything that asks "what kind of file is this" (the scanner's default extensions, the chunker,
the preview, the references) asks the registry. Adding a format is a module, a registry line and
its tests.

Formats that are not plain text are extracted in a worker process with limits
(:mod:`~explorer.core.ingest.formats.sandbox`); :mod:`~explorer.core.ingest.formats.reading`
reads a file for the index and :mod:`~explorer.core.ingest.formats.preview` for the preview.
"""

from explorer.core.ingest.extensions import extension_of
from explorer.core.ingest.formats.contract import (
    Document,
    DocumentFormat,
    Limits,
    Page,
    PreviewKind,
    Structure,
    pages_of,
)
from explorer.core.ingest.formats.registry import (
    DEFAULT_EXTENSIONS,
    DEFAULT_NAMES,
    FORMATS,
    claimed_format,
    format_for,
    format_named,
    is_markdown,
    sniffed_format,
)

__all__ = [
    "DEFAULT_EXTENSIONS",
    "DEFAULT_NAMES",
    "FORMATS",
    "Document",
    "DocumentFormat",
    "Limits",
    "Page",
    "PreviewKind",
    "Structure",
    "claimed_format",
    "extension_of",
    "format_for",
    "format_named",
    "is_markdown",
    "pages_of",
    "sniffed_format",
]
