"""AsciiDoc: sections at its titles (``== Section``), the document's title, its links.

Titles are lines of ``=`` (or Markdown's ``#``) marks, a space and the title, outside delimited
blocks (listing ``----``, literal ``....``, comment ``////``, passthrough ``++++``, sidebar
``****``, example ``====``, quote ``____``, fenced `````` ``` ``````) and line comments; the first
level-0 title (``= Title``) is the document's. Links are the files a page names by path:
``xref:`` and ``<<page.adoc#,text>>`` cross references, ``include::``, ``image:``/``image::``
and ``link:`` macros; read from the page's folder, or in an Antora site from its module's
``pages/`` folder (:func:`~explorer.core.retrieval.link_resolution.asciidoc_paths`).
Asciidoctor would be a Ruby dependency for this; the grammar's line structure is enough here.
"""

from __future__ import annotations

import re

from explorer.core.ingest.formats.contract import (
    Document,
    DocumentFormat,
    PreviewKind,
    Structure,
)
from explorer.core.ingest.front_matter import FileMetadata
from explorer.core.ingest.markup import Heading, heading_sections
from explorer.core.ingest.references import (
    FileReference,
    LinkFacts,
    LinkSyntax,
    ReferenceKind,
    link_path,
    with_mentions,
)
from explorer.core.ingest.windows import Chunker

_TITLE = re.compile(r"^(={1,6}|#{1,6})[ \t]+(\S.*)$")
"""A title line: its marks, a blank, the title (closing marks and blanks cut in :func:`_title`;
a pattern that cut them took quadratic time on a long run of blanks)."""
_DELIMITER = re.compile(r"^(?:([-./+*=_])\1{3,}|```)[ \t]*$")
_LINKS = re.compile(
    r"(?<![\w:])(?:(xref|link):([^\s\[\]]+)\[|(include|image)::?([^\s\[\]]+)\[)"
    r"|<<([^\s<>,#]+\.adoc)(?:#[^<>,]*)?(?:,[^<>]*)?>>"
)
_KINDS = {
    "xref": ReferenceKind.LINK,
    "link": ReferenceKind.LINK,
    "include": ReferenceKind.EMBED,
    "image": ReferenceKind.IMAGE,
}


class AsciiDocFormat(DocumentFormat):
    """AsciiDoc, read as text with its section titles as headings."""

    name = "asciidoc"
    extensions = frozenset({"adoc", "asciidoc"})
    preview_kind = PreviewKind.CODE
    summary = "sections at titles, the document title, xref/include/image links"
    reading = 2
    """1: read as plain text (before this format); 2: titles as sections, links."""

    def from_text(self, rel_path: str, text: str) -> Document:
        headings, references, title = _read(rel_path, text)
        metadata = FileMetadata()
        if title:
            metadata["title"] = title
        # The headings and links go with the document: the preview's outline (t) reads them.
        return Document(
            text, metadata=metadata, headings=tuple(headings), references=tuple(references)
        )

    def structure(self, rel_path: str, document: Document, chunker: Chunker) -> Structure:
        headings = [h for h in document.headings or () if h.start >= document.body_start]
        title = str(document.metadata.get("title", ""))
        sections = heading_sections(document.text, document.body_start, title, headings)
        return Structure(sections, self.link_facts(rel_path, document).references)

    def link_facts(self, rel_path: str, document: Document) -> LinkFacts:
        # Its own links were read with its titles (from_text); the mentions are read here, so
        # that a links-only reading (an index made before) gets them too.
        return with_mentions(rel_path, document.text, document.references or ())


def _read(rel_path: str, text: str) -> tuple[list[Heading], list[FileReference], str]:
    """The section titles, the links and the document's title, outside delimited blocks and
    comments, in one pass over the lines."""
    headings: list[Heading] = []
    references: list[FileReference] = []
    title = ""
    block = ""  # the delimiter line of the block being passed over
    start = 0
    for number, line in enumerate(text.split("\n"), start=1):
        end = start + len(line) + 1
        stripped = line.rstrip()
        if block:
            if stripped == block:
                block = ""
        elif _DELIMITER.match(line):
            block = stripped
        elif not line.startswith("//"):
            heading = _TITLE.match(line)
            if heading is not None:
                marks, text = heading.group(1), _title(heading.group(1), heading.group(2))
                if len(marks) == 1 and not title and not headings:
                    title = text
                headings.append(Heading(start, len(marks), text, end))
            references.extend(_links(number, line))
        start = end
    return headings, references, title


def _title(marks: str, text: str) -> str:
    """A title without the blanks after it, nor the closing marks AsciiDoc allows
    (``== Section ==``)."""
    text = text.rstrip()
    if text.endswith(marks) and text[: -len(marks)].endswith((" ", "\t")):
        text = text[: -len(marks)].rstrip()
    return text


def _links(number: int, line: str) -> list[FileReference]:
    found = []
    for match in _LINKS.finditer(line):
        macro = match.group(1) or match.group(3) or "xref"
        raw = match.group(2) or match.group(4) or match.group(5)
        if raw and "{" not in raw and link_path(raw) is not None:  # not an {attribute}
            kind = _KINDS[macro]
            found.append(FileReference(number, kind, raw, raw, "", LinkSyntax.ASCIIDOC))
    return found
