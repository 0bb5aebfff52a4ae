"""Markup documents for the chunker: sections at the headings of Markdown and reStructuredText.

Markdown is parsed once per file by :mod:`explorer.core.ingest.markdown_tokens`: its block tokens
give the headings of both styles (``# ATX`` and underlined ``Setext``, never a ``#`` line inside
fenced code), and :mod:`explorer.core.ingest.references` reads its links from the same tokens. A
heading nested in a list item or a block quote counts too: it is shown as a heading. Front
matter is read by :mod:`explorer.core.ingest.front_matter`; the Markdown is parsed from the end
of its fence.

reStructuredText titles (a line underlined, maybe overlined, with punctuation) are found line by
line: docutils would be a large dependency for this one question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from explorer.core.ingest.markdown_tokens import plain_inline
from explorer.core.ingest.windows import Chunker, Section

if TYPE_CHECKING:
    from markdown_it.token import Token

_RST_ADORNMENT = re.compile(r"([=\-~^\"'`#*+:._])\1{2,}[ \t]*\r?$")


@dataclass(frozen=True)
class Heading:
    """A heading of a document: where it stands, how deep it is and what it says."""

    start: int
    """Offset of the start of the heading's first line."""
    level: int
    """Smaller is higher: 1 to 6 in Markdown; in reStructuredText, the order styles appear in."""
    title: str
    end: int
    """Offset of the start of the line after the heading (its underline included)."""


MAX_ENTRY_CHARS = 80
"""An entry's name longer than this is cut at a word (a glossary's term, a Texinfo signature)."""


def entry_title(text: str) -> str:
    """``text`` as the name of a reference page's entry (an API manual's function, a manual
    page's option): on one line, cut at a word past :data:`MAX_ENTRY_CHARS` characters."""
    title = " ".join(text.split())
    if len(title) > MAX_ENTRY_CHARS:
        title = title[:MAX_ENTRY_CHARS].rsplit(" ", 1)[0] + "…"
    return title


class PageEntries:
    """A reference page's entries as a reader meets them: each begun at its term, at the depth
    its list is nested, and ended where its definition has been read (a member's before its
    class's)."""

    def __init__(self) -> None:
        self.found: list[Heading] = []
        self._open: list[tuple[int, int]] = []
        """The entries whose definition is being read: (place in ``found``, depth)."""

    def begin(self, entry: Heading, depth: int) -> None:
        self._open.append((len(self.found), depth))
        self.found.append(entry)

    def end(self, depth: int, at: int) -> None:
        """End at offset ``at`` the entries begun at ``depth`` or deeper."""
        while self._open and self._open[-1][1] >= depth:
            place, _depth = self._open.pop()
            self.found[place] = replace(self.found[place], end=at)


def markdown_headings(chunker: Chunker, body: int, blocks: Sequence[Token]) -> list[Heading]:
    """The headings of a Markdown document, from its block tokens.

    A title is the heading's text as written, a trailing ``{#id}`` attribute left out and the
    lines of an underlined heading joined by a space.
    """
    first_line = chunker.text.count("\n", 0, body)
    starts, size = chunker.line_starts, len(chunker.text)
    headings: list[Heading] = []
    for index, token in enumerate(blocks):
        if token.type != "heading_open" or token.map is None:
            continue
        inline = blocks[index + 1] if index + 1 < len(blocks) else None
        title = inline.content if inline is not None and inline.type == "inline" else ""
        if token.markup in ("=", "-"):  # underlined: the title may span lines
            title = " ".join(line.strip() for line in title.splitlines())
        title = without_anchor(plain_inline(title))
        first, after = (first_line + line for line in token.map)
        end = starts[after] if after < len(starts) else size
        headings.append(Heading(starts[first], int(token.tag[1:]), title, end))
    return headings


def without_anchor(title: str) -> str:
    """A heading's title without the ``{#id}`` that ends it (Pandoc, Hugo, kramdown), stripped.

    The anchor is the first ``{#`` after the last ``}`` before the closing one. Found by looking
    back from the end, not by a pattern searched from each character: a title holding a run of
    20,000 spaces took 1.35 s that way, in the indexer, with no time cap."""
    core = title.rstrip()
    if not core.endswith("}"):
        return title.strip()
    start = core.find("{#", core.rfind("}", 0, len(core) - 1) + 1)
    return (core[:start] if start >= 0 else core).strip()


def rst_headings(text: str, body: int) -> list[Heading]:
    """Headings of reStructuredText: a line underlined (and maybe overlined) with punctuation."""
    lines = text.split("\n")
    line_starts = [0]
    for line in lines[:-1]:
        line_starts.append(line_starts[-1] + len(line) + 1)
    styles: list[str] = []
    headings: list[Heading] = []
    for number in range(1, len(lines)):
        title, under = lines[number - 1].strip(), lines[number].rstrip()
        before = lines[number - 2].rstrip() if number >= 2 else ""
        match = _RST_ADORNMENT.match(under)
        if (
            not match
            or not title
            or _RST_ADORNMENT.match(title)
            or len(under) < len(title)
            or before
            and before != under
        ):
            continue  # not a title, or one that does not follow a blank line or its overline
        start = line_starts[number - 2 if before else number - 1]
        if start >= body and (not headings or start >= headings[-1].end):
            style = match.group(1) + ("/" if before else "")
            styles += [] if style in styles else [style]
            end = line_starts[number + 1] if number + 1 < len(line_starts) else len(text)
            headings.append(Heading(start, styles.index(style), title, end))
    return headings


def heading_sections(text: str, body: int, title: str, headings: list[Heading]) -> list[Section]:
    """A section per heading, with the path of enclosing headings; heading-only ones merge on.

    The text before the first heading is a section titled ``title`` (the front matter's).
    """
    sections = [Section(body, headings[0].start if headings else len(text), title)]
    stack: list[tuple[int, str]] = []
    pending: int | None = None
    for index, heading in enumerate(headings):
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.title))
        end = headings[index + 1].start if index + 1 < len(headings) else len(text)
        start = heading.start if pending is None else pending
        if not text[heading.end : end].strip() and index + 1 < len(headings):
            pending = start  # heading only: merge into the next section
            continue
        pending = None
        sections.append(Section(start, end, " > ".join(h for _, h in stack if h)))
    return sections
