"""HTML nested deeper than libxml2 reads, made shallow enough to read whole.

libxml2's HTML parser stops at a fixed depth (256 elements, 2,048 with ``huge_tree``): it
halts there, and everything after the nest (its own text, the rest of the page) is lost
without an exception. :func:`flattened` rewrites such a page for a second parse: below a
depth, the tags of elements that only contain (a ``<div>``, a ``<span>``: the caller says
which matter) are left out, their text kept in place, so the deep levels read as one while
paragraphs, links and headings in them stay what they are; below a second, deeper limit every
tag is left out. Every other byte is kept, so the shallow part of the page parses exactly as
before.

The tags are found by the standard library's tokenizer (:class:`html.parser.HTMLParser`),
which keeps no tree and never recurses; nesting is tracked as libxml2 tracks it closely
enough: void elements and ``<x/>`` open nothing, an end tag closes up to the innermost open
element of its name, and a stray one is left alone. Each tag costs a constant amount of work
(an end tag's search is bounded by counting the open elements of each name), so a page is
rewritten in time linear in its size.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

VOID_TAGS = frozenset(
    "area base br col embed hr img input keygen link meta param source track wbr".split()
)
"""Elements that never hold content: they open no level."""
_NEWLINE = re.compile("\n")

Attributes = list[tuple[str, str | None]]
Keep = Callable[[str, Attributes], bool]
"""Whether an element (its tag and attributes) matters to the text below the flat depth."""


def flattened(source: str | bytes, depth: int, limit: int, keep: Keep) -> str | bytes:
    """``source`` with the tags left out of the elements nested over ``depth`` levels deep
    that ``keep`` refuses, and of all those nested over ``limit`` levels (counting the
    elements kept).

    Bytes are read as Latin-1 (one character per byte), so a page in any ASCII-compatible
    encoding keeps its bytes, its ``charset`` declaration with them.
    """
    if isinstance(source, bytes):
        text = flattened(source.decode("latin-1"), depth, limit, keep)
        assert isinstance(text, str)
        return text.encode("latin-1")
    scanner = _DeepTags(source, depth, limit, keep)
    scanner.feed(source)
    scanner.close()
    return scanner.result()


class _DeepTags(HTMLParser):
    """Tokenizes a page and keeps everything but the deep tags left out."""

    def __init__(self, text: str, depth: int, limit: int, keep: Keep) -> None:
        super().__init__(convert_charrefs=False)
        self.text = text
        self.depth = depth
        self.limit = limit
        self.keep = keep
        self.line_starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]
        self.open: list[str] = []
        """Names of the open elements, outermost first."""
        self.kept_open: list[bool] = []
        """Whether each open element's tags are kept."""
        self.depth_kept = 0
        """How many of the open elements are kept: the depth libxml2 will see."""
        self.open_by_name: dict[str, int] = {}
        self.kept: list[str] = []
        self.kept_up_to = 0
        """Where the text not yet copied to ``kept`` starts."""

    def result(self) -> str:
        return "".join(self.kept) + self.text[self.kept_up_to :]

    def handle_starttag(self, tag: str, attrs: Attributes) -> None:
        if tag in VOID_TAGS:
            return
        kept = self.depth_kept < self.depth or (
            self.depth_kept < self.limit and self.keep(tag, attrs)
        )
        if not kept:
            start = self._offset()
            self._leave_out(start, start + len(self.get_starttag_text() or ""))
        self.open.append(tag)
        self.kept_open.append(kept)
        self.depth_kept += kept
        self.open_by_name[tag] = self.open_by_name.get(tag, 0) + 1

    def handle_startendtag(self, tag: str, attrs: Attributes) -> None:
        """``<x/>``: opens nothing (libxml2 closes it at once)."""

    def handle_endtag(self, tag: str) -> None:
        if not self.open_by_name.get(tag):
            return  # closes nothing open: libxml2 ignores it
        while True:
            closed, kept = self.open.pop(), self.kept_open.pop()
            self.open_by_name[closed] -= 1
            self.depth_kept -= kept
            if closed == tag:
                break
        if not kept:
            start = self._offset()
            end = self.text.find(">", start)
            self._leave_out(start, len(self.text) if end < 0 else end + 1)

    def _offset(self) -> int:
        """Where the token being handled starts in the text."""
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def _leave_out(self, start: int, end: int) -> None:
        if start > self.kept_up_to:
            self.kept.append(self.text[self.kept_up_to : start])
        self.kept_up_to = max(self.kept_up_to, end)
