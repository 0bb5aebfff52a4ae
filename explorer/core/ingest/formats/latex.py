"""LaTeX sources: sections at the sectioning commands, the title from ``\\title``.

The source is indexed and shown as written (highlighted as TeX in the preview). Its structure
is read by a scan of the commands, not by a TeX parser: ``\\part`` to ``\\subparagraph``
(starred or not, with or without a short title in brackets) head sections at their level,
``\\title{…}`` names the document, and commands inside verbatim environments (a manual showing
``\\section`` in an example) and in comments are passed over. pylatexenc, the parser at hand,
took 2.3 s for the amsmath manual's 100 KB here; only the titles need reading, and they are cut
down to their words: commands dropped, their braced arguments kept.

The files a source pulls in are its links: ``\\input``, ``\\include`` and ``\\subfile``
(``.tex`` when no extension is written), ``\\bibliography`` (``.bib``) and
``\\addbibresource``, and ``\\includegraphics`` as an image. TeX reads each from the main
file's folder: a link resolves from the source's folder or the nearest one above holding it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from pathlib import PurePosixPath

from explorer.core.ingest.formats.contract import Document, DocumentFormat, PreviewKind, Structure
from explorer.core.ingest.front_matter import FileMetadata
from explorer.core.ingest.markup import Heading, heading_sections
from explorer.core.ingest.references import (
    FileReference,
    LinkSyntax,
    ReferenceKind,
    link_path,
)
from explorer.core.ingest.windows import Chunker

LEVELS = {
    "part": 0,
    "chapter": 1,
    "section": 2,
    "subsection": 3,
    "subsubsection": 4,
    "paragraph": 5,
    "subparagraph": 6,
}
"""The sectioning commands and their depth (smaller is higher)."""

TITLE_CHARS = 500
"""The longest braced title read; an argument that does not close by then ends at its line."""

_SECTIONING = re.compile(
    r"^[ \t]*\\(" + "|".join(LEVELS) + r")\*?[ \t]*(?:\[[^\]\n]*\][ \t]*)?\{",
    re.MULTILINE,
)
_TITLE = re.compile(r"\\title[ \t]*(?:\[[^\]\n]*\][ \t]*)?\{")
_VERBATIM = re.compile(r"\\begin\{(verbatim\*?|Verbatim\*?|lstlisting|minted|comment|alltt)\}")
_COMMENT = re.compile(r"(?<!\\)%.*")
_COMMENT_START = re.compile(r"(?<!\\)%")
_PULLED_IN = re.compile(
    r"\\(input|include|subfile|bibliography|addbibresource|includegraphics)\*?[ \t]*"
    r"(?:\[[^\]\n]*\][ \t]*)?\{([^{}\n]+)\}"
)
_DEFAULT_EXTENSION = {
    "input": ".tex",
    "include": ".tex",
    "subfile": ".tex",
    "bibliography": ".bib",
    "addbibresource": "",
    "includegraphics": "",
}
"""What TeX adds to a name written without an extension (a picture's is the driver's to find)."""
TEX_LINK = LinkSyntax.TEX_INPUT
_DROPPED = re.compile(r"\\(?:label|index|footnote|thanks|cite|ref)\*?(?:\[[^\]]*\])?\{[^{}]*\}")
_LOGOS = {"TeX": "TeX", "LaTeX": "LaTeX", "LaTeXe": "LaTeX2e", "BibTeX": "BibTeX"}
_COMMAND = re.compile(r"\\([A-Za-z]+)\*?|\\(.)")
_SPACE = re.compile(r"\s+")


class LatexFormat(DocumentFormat):
    """LaTeX, read as text with its sectioning commands as headings."""

    name = "latex"
    extensions = frozenset({"tex", "ltx", "latex"})
    preview_kind = PreviewKind.CODE
    summary = "sections at \\section and its kin, the \\title"
    reading = 2
    """2: a file's name made by a macro (``\\input{\\jobname.ind}``) is no link."""

    def from_text(self, rel_path: str, text: str) -> Document:
        source = _Source(text)
        metadata = FileMetadata()
        for match in _TITLE.finditer(text):
            if not source.passed_over(match.start()):
                title = plain_title(_braced(text, match.end())[0])
                if title:
                    metadata["title"] = title
                break
        # The headings and links go with the document, found in the one reading of the source:
        # the preview's outline (t) reads the headings there, the index both.
        return Document(
            text,
            metadata=metadata,
            headings=tuple(latex_headings(source)),
            references=tuple(latex_references(source)),
        )

    def structure(self, rel_path: str, document: Document, chunker: Chunker) -> Structure:
        headings = [h for h in document.headings or () if h.start >= document.body_start]
        title = str(document.metadata.get("title", ""))
        sections = heading_sections(document.text, document.body_start, title, headings)
        return Structure(sections, self.link_facts(rel_path, document).references)

    def preview_language(self, rel_path: str, text: str) -> str | None:
        return "latex"


def latex_references(source: _Source) -> list[FileReference]:
    """The files a LaTeX source pulls in, outside verbatim text and comments."""
    references: list[FileReference] = []
    for match in _PULLED_IN.finditer(source.text):
        if source.passed_over(match.start()):
            continue
        line = bisect_right(source.line_starts, match.start())
        command = match.group(1)
        kind = ReferenceKind.IMAGE if command == "includegraphics" else ReferenceKind.LINK
        for name in match.group(2).split(","):
            raw = name.strip()
            if not raw or "\\" in raw or link_path(raw) is None:
                continue  # nothing, a URL, or a name a macro makes (``\jobname.ind``)
            named = raw
            if not PurePosixPath(raw).suffix:
                named += _DEFAULT_EXTENSION[command]
            references.append(FileReference(line, kind, raw, named, syntax=TEX_LINK))
    return references


def latex_headings(source: _Source) -> list[Heading]:
    """The sectioning commands of a LaTeX source, outside verbatim text and comments, in
    order."""
    text = source.text
    headings: list[Heading] = []
    for match in _SECTIONING.finditer(text):
        start = match.start()
        if source.passed_over(start) or (headings and start < headings[-1].end):
            continue
        title, close = _braced(text, match.end())
        line_end = text.find("\n", close)
        end = len(text) if line_end < 0 else line_end + 1  # the line after the title's
        headings.append(Heading(start, LEVELS[match.group(1)], plain_title(title), end))
    return headings


def plain_title(source: str) -> str:
    """A title's words: labels, footnotes and references dropped, other commands' names
    dropped and their braced arguments kept, TeX's logos spelt out, ``~`` a space."""
    text = _COMMENT.sub("", source)
    for _ in range(3):  # nested: \footnote{see \ref{x}}
        text = _DROPPED.sub("", text)
    text = _COMMAND.sub(_command_text, text)
    text = text.replace("~", " ").replace("{", "").replace("}", "")
    return _SPACE.sub(" ", text).strip()


def _command_text(match: re.Match[str]) -> str:
    name, symbol = match.group(1), match.group(2)
    if name is not None:
        return _LOGOS.get(name, "")
    return " " if symbol == "\\" else symbol  # \\ breaks a line; \& \% \_ \$ \# are the sign


def _braced(text: str, start: int) -> tuple[str, int]:
    """The argument opened just before ``start`` and where it closes (its ``}``): braces
    balanced, escaped ones aside; unclosed within :data:`TITLE_CHARS`, to the end of its line."""
    depth = 1
    position = start
    limit = min(len(text), start + TITLE_CHARS)
    while position < limit:
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start:position], position
        position += 1
    line_end = text.find("\n", start, limit)
    line_end = limit if line_end < 0 else line_end
    return text[start:line_end], max(start, line_end - 1)


class _Source:
    """A LaTeX source and where its verbatim environments and comments stand, found once in
    linear time (a hostile file of unclosed environments or of one long line included): each
    question after is a bisect."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.verbatim = _verbatim_spans(text)
        self.line_starts = [0] + [match.end() for match in re.finditer("\n", text)]
        self.comments = [match.start() for match in _COMMENT_START.finditer(text)]

    def passed_over(self, position: int) -> bool:
        """Whether ``position`` is inside a verbatim environment or after a ``%`` on its line."""
        spans = self.verbatim
        index = bisect_right(spans, (position, 1 << 62)) - 1  # the last span starting by it
        if index >= 0 and spans[index][0] <= position < spans[index][1]:
            return True
        comment = bisect_right(self.comments, position - 1) - 1  # the last % before it
        if comment < 0:
            return False
        line_start = self.line_starts[bisect_right(self.line_starts, position) - 1]
        return self.comments[comment] >= line_start


def _verbatim_spans(text: str) -> list[tuple[int, int]]:
    """Where the verbatim environments stand, in order; one left open runs to the end (as TeX
    reads it), so the scan stops there."""
    spans: list[tuple[int, int]] = []
    position = 0
    while (match := _VERBATIM.search(text, position)) is not None:
        closing = f"\\end{{{match.group(1)}}}"
        end = text.find(closing, match.end())
        if end < 0:
            spans.append((match.start(), len(text)))
            break
        position = end + len(closing)
        spans.append((match.start(), position))
    return spans
