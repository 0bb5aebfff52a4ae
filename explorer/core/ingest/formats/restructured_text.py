"""reStructuredText: sections at its underlined (and overlined) titles.

Titles are found line by line (:func:`explorer.core.ingest.markup.rst_headings`): docutils would
be a large dependency for this one question. References are path mentions in backticks.
"""

from __future__ import annotations

from explorer.core.ingest.formats.contract import Document, DocumentFormat, PreviewKind, Structure
from explorer.core.ingest.markup import heading_sections, rst_headings
from explorer.core.ingest.windows import Chunker


class RestructuredTextFormat(DocumentFormat):
    """reStructuredText, read as text with its titles as headings."""

    name = "rst"
    extensions = frozenset({"rst"})
    preview_kind = PreviewKind.CODE
    summary = "sections at titles, path mentions"

    def from_text(self, rel_path: str, text: str) -> Document:
        # The headings go with the document: the preview's outline (t) reads them there.
        return Document(text, headings=tuple(rst_headings(text, 0)))

    def structure(self, rel_path: str, document: Document, chunker: Chunker) -> Structure:
        headings = [h for h in document.headings or () if h.start >= document.body_start]
        sections = heading_sections(document.text, document.body_start, "", headings)
        return Structure(sections, self.link_facts(rel_path, document).references)
