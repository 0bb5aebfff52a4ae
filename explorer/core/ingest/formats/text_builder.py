"""Writing the text of an extracted document, block by block, with its structure recorded.

Extracted formats (HTML, DOCX, PDF) describe a document as blocks: headings, paragraphs, list
items, code, table rows, pages. :class:`TextBuilder` writes them as plain, readable text in a
light Markdown style (``## Heading``, ``- item``, fenced code, ``| a | b |`` rows, blank lines
between blocks, prose wrapped at :data:`WRAP_WIDTH` columns so a preview without wrapping reads
well) and records, as it writes, where each heading and page stands and on which line each link
falls. The offsets it records are those of the text it returns, so chunks, lines and the
preview agree.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from explorer.core.ingest.formats.contract import Page
from explorer.core.ingest.markup import Heading

WRAP_WIDTH = 100
"""Prose is wrapped at this many characters (a longer word stands on a line of its own)."""
MAX_HEADING_CHARS = 300
"""A heading longer than this is cut (a heading is a title, not a paragraph)."""


def collapse(pieces: Sequence[str]) -> tuple[str, list[int]]:
    """The pieces of a paragraph joined with each run of white space made one space, and where
    each piece starts in the result (the offset of its first word)."""
    out: list[str] = []
    starts: list[int] = []
    length = 0
    space = False  # white space before the next word
    for piece in pieces:
        if piece[:1].isspace():
            space = True
        words = piece.split()
        if not words:
            starts.append(length)
            continue
        if space and length:
            out.append(" ")
            length += 1
        starts.append(length)
        joined = " ".join(words)  # a piece's words at once: this runs for every paragraph
        out.append(joined)
        length += len(joined)
        space = piece[-1].isspace()
    return "".join(out), starts


def wrap(text: str, width: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each line of ``text`` (words separated by single spaces) wrapped
    at ``width`` characters; a word longer than ``width`` has a line of its own."""
    lines: list[tuple[int, int]] = []
    start = 0
    size = len(text)
    while start < size:
        if size - start <= width:
            lines.append((start, size))
            break
        cut = text.rfind(" ", start, start + width + 1)
        if cut <= start:
            cut = text.find(" ", start + width)
            if cut < 0:
                lines.append((start, size))
                break
        lines.append((start, cut))
        start = cut + 1
    return lines


PAGE_BREAK_LINES = 2
"""Lines a page break takes before its page's text: the page-break line and a blank line."""


def page_break_line(number: int) -> str:
    """The line that opens page ``number`` (1-based) in an extracted document's text."""
    return f"─── page {number} ───"


class TextBuilder:
    """Accumulates an extracted document's text and where its headings, pages and links are."""

    def __init__(self, max_chars: int, width: int = WRAP_WIDTH) -> None:
        self.max_chars = max_chars
        self.width = width
        self.headings: list[Heading] = []
        self.pages: list[Page] = []
        self.full = False
        """True once :attr:`max_chars` was reached: what follows is left out."""
        self._parts: list[str] = []
        self._length = 0
        self._newlines = 0
        self._page_start: int | None = None
        self._tail = ""
        """The last two characters written (to know whether a blank line is needed)."""
        self._tight = False
        """Whether the last block was a tight paragraph (a list item)."""
        self.block_start = 0
        """Where the last paragraph written starts (after the blank line before it)."""

    # -- where we are ---------------------------------------------------------------------------
    @property
    def length(self) -> int:
        return self._length

    @property
    def line(self) -> int:
        """The 1-based line the next character written lands on."""
        return self._newlines + 1

    # -- blocks ---------------------------------------------------------------------------------
    def heading(self, level: int, title: str) -> None:
        """A heading line (``#`` × level, then the title) that opens a section."""
        title = " ".join(title.split())[:MAX_HEADING_CHARS]
        if not title:
            return
        self._separate()
        start = self._length
        if self._write("#" * max(1, min(level, 6)) + " " + title + "\n"):
            self.headings.append(Heading(start, level, title, self._length))

    def paragraph(
        self,
        pieces: Sequence[str],
        prefix: str = "",
        indent: str = "",
        tight: bool = False,
        follows: bool = False,
    ) -> list[int] | None:
        """Prose, its white space collapsed and wrapped; ``prefix`` opens the first line
        (``- ``) and ``indent`` the others; a ``tight`` paragraph (a list item) follows a
        tight one without a blank line, and one that ``follows`` follows any block so (a
        term's definition under the term). Returns the line each piece starts on (for the
        links among them), or None when the paragraph holds no text."""
        text, starts = collapse(pieces)
        if not text:
            return None
        if (follows or (tight and self._tight)) and self._tail.endswith("\n") and not self.full:
            pass  # list items stay together, a definition under its term
        else:
            self._separate()
        width = max(20, self.width - len(prefix))
        lines = wrap(text, width)
        first_line = self.line
        self.block_start = self._length
        written = [
            (prefix if number == 0 else indent) + text[start:end]
            for number, (start, end) in enumerate(lines)
        ]
        self._write("\n".join(written) + "\n")
        self._tight = tight
        line_starts = [start for start, _end in lines]
        return [first_line + max(bisect_right(line_starts, offset) - 1, 0) for offset in starts]

    def preformatted(self, text: str, language: str = "") -> None:
        """Code or other preformatted text, lines kept, in a fenced block."""
        lines = [line.rstrip() for line in text.expandtabs(4).split("\n")]
        first = next((number for number, line in enumerate(lines) if line), len(lines))
        while len(lines) > first and not lines[-1]:
            lines.pop()
        lines = lines[first:]
        if not lines:
            return
        # longer than any backtick run a line starts with (grown a backtick at a time, a line of
        # 160,000 backticks was looked at 160,000 times)
        starts = (line.lstrip() for line in lines)
        longest = max((len(start) - len(start.lstrip("`")) for start in starts), default=0)
        fence = "`" * max(3, longest + 1)
        self._separate()
        self._write(f"{fence}{language}\n" + "\n".join(lines) + f"\n{fence}\n")

    def table(self, rows: Sequence[Sequence[str]]) -> list[int | None]:
        """Table rows as ``| a | b |`` lines (each cell's white space collapsed); returns the
        line each row is written on (None for an empty row, left out)."""
        lines: list[str] = []
        numbers: list[int | None] = []
        for row in rows:
            cells = [" ".join(cell.split()).replace("|", "\\|") for cell in row]
            if any(cells):
                numbers.append(len(lines))
                lines.append("| " + " | ".join(cells) + " |")
            else:
                numbers.append(None)
        if not lines:
            return numbers
        self._separate()
        first = self.line
        self._write("\n".join(lines) + "\n")
        return [None if number is None else first + number for number in numbers]

    def start_page(self, number: int) -> None:
        """Open page ``number`` (1-based) with its page-break line."""
        self.end_page()
        self._separate()
        self._write(f"{page_break_line(number)}\n\n")
        self._page_start = self._length

    def end_page(self) -> None:
        """Close the open page (its text is what was written since it opened)."""
        if self._page_start is not None:
            self.pages.append(Page(self._page_start, self._length))
            self._page_start = None

    def raw(self, text: str) -> None:
        """Text written as it is (a page's text, lines kept), after a blank line."""
        if text:
            self._separate()
            self._write(text if text.endswith("\n") else text + "\n")

    def text(self) -> str:
        """Everything written (the open page closed)."""
        self.end_page()
        return "".join(self._parts)

    # -- writing --------------------------------------------------------------------------------
    def _separate(self) -> None:
        """A blank line before the next block (none at the start of the text or of a page)."""
        if self._length and self._length != self._page_start and self._tail != "\n\n":
            self._write("\n" if self._tail.endswith("\n") else "\n\n")

    def _write(self, text: str) -> bool:
        self._tight = False
        if self.full:
            return False
        if self._length + len(text) > self.max_chars:
            self.full = True  # the lines of this block that fit are kept (a long <pre>)
            room = self.max_chars - self._length
            text = text[: text.rfind("\n", 0, room) + 1]
            if not text:
                return False
        self._parts.append(text)
        self._length += len(text)
        self._newlines += text.count("\n")
        self._tail = (self._tail + text)[-2:]
        return True
