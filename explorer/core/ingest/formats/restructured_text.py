"""reStructuredText: sections at its underlined (and overlined) titles, Sphinx's links.

Titles are found line by line (:func:`explorer.core.ingest.markup.rst_headings`): docutils would
be a large dependency for this one question. Links are what a Sphinx project writes between its
pages: ``:doc:`` roles and ``toctree`` entries (a page by its name, without its suffix),
``:ref:`` roles (a place marked ``.. _label:`` in any page), the files ``include``,
``literalinclude``, ``image``, ``figure`` and ``:download:`` pull in, and hyperlinks to a
relative path; besides, path mentions in backticks. Literal blocks and code
directives are passed over.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from explorer.core.ingest.formats.contract import Document, DocumentFormat, PreviewKind, Structure
from explorer.core.ingest.markup import heading_sections, rst_headings
from explorer.core.ingest.references import (
    FileReference,
    LinkFacts,
    ReferenceKind,
    sphinx_doc,
    sphinx_file,
    sphinx_label,
    sphinx_label_marked,
    sphinx_ref,
    sphinx_role_target,
    sphinx_toctree_entry,
    with_mentions,
)
from explorer.core.ingest.windows import Chunker

_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::(.*)$")
"""``.. name:: argument`` (its indent, name and argument)."""
_LITERAL_DIRECTIVES = frozenset(
    {
        "code",
        "code-block",
        "sourcecode",
        "literalinclude",
        "highlight",
        "math",
        "raw",
        "parsed-literal",
    }
)
"""Directives whose content is text shown as it is, never read for links."""
_FILE_DIRECTIVES = {
    "include": ReferenceKind.EMBED,
    "literalinclude": ReferenceKind.EMBED,
    "image": ReferenceKind.IMAGE,
    "figure": ReferenceKind.IMAGE,
}
"""Directives whose argument is a file, and what that file is to the page."""
_DOC_ROLE = re.compile(r"(?<![\w`]):(?:std:)?doc:`([^`]+)`")
_REF_ROLE = re.compile(r"(?<![\w`]):(?:std:)?(?:ref|numref):`([^`]+)`")
_DOWNLOAD_ROLE = re.compile(r"(?<![\w`]):download:`([^`]+)`")
_HYPERLINK = re.compile(r"(?<![\w`:])`([^`<]*)<([^`<>]+)>`__?(?!\w)")
"""`` `text <target>`_ `` (or ``__``): a hyperlink with its target in place."""


class RestructuredTextFormat(DocumentFormat):
    """reStructuredText, read as text with its titles as headings."""

    name = "rst"
    extensions = frozenset({"rst"})
    preview_kind = PreviewKind.CODE
    summary = "sections at titles, Sphinx's links between pages"
    reading = 2
    """2: Sphinx's links (``:doc:``, ``toctree``, ``include`` and the like)."""

    def from_text(self, rel_path: str, text: str) -> Document:
        # The headings go with the document: the preview's outline (t) reads them there.
        return Document(text, headings=tuple(rst_headings(text, 0)))

    def structure(self, rel_path: str, document: Document, chunker: Chunker) -> Structure:
        headings = [h for h in document.headings or () if h.start >= document.body_start]
        sections = heading_sections(document.text, document.body_start, "", headings)
        return Structure(sections, self.link_facts(rel_path, document).references)

    def link_facts(self, rel_path: str, document: Document) -> LinkFacts:
        return with_mentions(rel_path, document.text, rst_references(rel_path, document.text))


@dataclass
class _Line:
    number: int
    """1-based."""
    text: str


def rst_references(rel_path: str, text: str) -> list[FileReference]:
    """The links of a reStructuredText page to other files of its project (see the module
    docstring), in order."""
    references: list[FileReference] = []
    lines = [_Line(number, line) for number, line in enumerate(text.split("\n"), start=1)]
    for line, in_toctree in _read_lines(lines):
        if in_toctree:
            entry = sphinx_toctree_entry(line.text)
            if entry is not None:
                references.append(sphinx_doc(line.number, entry))
            continue
        directive = _DIRECTIVE.match(line.text)
        if directive is not None and directive.group(2) in _FILE_DIRECTIVES:
            raw = directive.group(3).strip()
            kind = _FILE_DIRECTIVES[directive.group(2)]
            reference = sphinx_file(rel_path, line.number, raw, kind)
            if reference is not None:
                references.append(reference)
            continue
        label = sphinx_label_marked(line.text)
        if label is not None:
            references.append(sphinx_label(line.number, label))
            continue
        for match in _DOC_ROLE.finditer(line.text):
            references.append(sphinx_doc(line.number, sphinx_role_target(match.group(1))))
        for match in _REF_ROLE.finditer(line.text):
            ref = sphinx_ref(line.number, match.group(1))
            if ref is not None:
                references.append(ref)
        for match in _DOWNLOAD_ROLE.finditer(line.text):
            found = sphinx_file(
                rel_path, line.number, sphinx_role_target(match.group(1)), ReferenceKind.LINK
            )
            if found is not None:
                references.append(found)
        for match in _HYPERLINK.finditer(line.text):
            target = match.group(2).strip()
            if not target.endswith("_"):  # `text <name_>`_ names another target
                found = sphinx_file(rel_path, line.number, target, ReferenceKind.LINK)
                if found is not None:
                    references.append(found)
    return references


def _read_lines(lines: list[_Line]) -> Iterator[tuple[_Line, bool]]:
    """Each line that may hold a link, and whether it is an entry of a ``toctree``: the lines
    of literal blocks (after ``::``) and of code directives are passed over, as are a
    directive's options."""
    skip_below: int | None = None  # the indent a skipped block's lines are deeper than
    toctree_below: int | None = None
    for line in lines:
        stripped = line.text.strip()
        indent = len(line.text) - len(line.text.lstrip())
        if skip_below is not None:
            if not stripped or indent > skip_below:
                continue
            skip_below = None
        if toctree_below is not None:
            if not stripped:
                continue
            if indent > toctree_below:
                if not stripped.startswith(":"):  # an option (``:maxdepth: 2``)
                    yield line, True
                continue
            toctree_below = None
        directive = _DIRECTIVE.match(line.text)
        if directive is not None:
            name = directive.group(2)
            if name == "toctree":
                toctree_below = indent
                continue
            if name in _LITERAL_DIRECTIVES:
                skip_below = indent
                if name == "literalinclude":
                    yield line, False  # its argument is a file all the same
                continue
        elif stripped.endswith("::") and not stripped.startswith(".."):
            skip_below = indent  # a literal block follows
        yield line, False
