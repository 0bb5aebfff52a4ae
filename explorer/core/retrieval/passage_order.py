"""Which passages of a result file come first: content before lists of links or of pages.

A page's "Related" or "See also" section is a list of links whose texts are the titles of other
pages. Those titles hold the words a question asks about, so such a section often scores as the
page's best passage: "how do I restore a backup" matched the restore runbook's
``## Related - [Backups](…) - [Failed backups](…)`` above its restore steps, and Enter opened
the page at its link list. The passage a result leads with should be the page's own text.

A passage is a *link list* when links (``[text](target)``, ``[[wikilinks]]``) make up at least
:data:`LINK_LIST_SHARE` of its characters, headings aside. Text read from HTML keeps no link
syntax, only the lines its references are on: given those lines, a passage is a link list when
most of its lines are short list items holding a link (a table of contents, a "See also" list;
related files pass them, the order of a result's passages does not yet). Within a
file, such a passage gives its place to a content passage that scores at most
:data:`LINK_LIST_PENALTY` below it.

A PDF's table of contents and its index are such lists too, with page numbers for links: an
index holds every name the manual defines, and its page matched ``\\intarray`` above the
pages that document it. A passage is a *list of references* when most of its lines join an
entry to its pages by a leader of dots (``5.1 Defining variants . . . . 30``) or end with
several numbers (``\\tl_set:Nn 237, 1172``); it gives its place to a content passage that
scores at most :data:`REFERENCE_LIST_PENALTY` below it.

Only the order of a file's passages changes: the file's score, and so the ranking of files,
does not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from functools import lru_cache
from typing import Protocol, TypeVar

LINK_LIST_SHARE = 0.5
"""The least share of a passage's characters (headings and white space aside) inside links for
it to read as a list of links."""
LINK_LINE_SHARE = 0.6
"""The least share of a passage's non-blank lines that are list items holding a link, for text
whose links are known by line only."""
LINK_LINE_CHARS = 60
"""The longest mean line of such a list: its items are titles, not sentences."""
LINK_LIST_PENALTY = 0.1
"""How far below a link list a content passage of the same file may score and still lead."""
REFERENCE_LIST_PENALTY = 0.3
"""The same for a list of references: an index names a term once per entry it points at, so it
outscores the page about the term by more than a link list outscores its page's text."""

REFERENCE_LINE_SHARE = 0.5
"""The least share of a passage's non-blank lines that point at pages, for it to read as a
table of contents or an index."""
REFERENCE_LINES = 3
"""The fewest such lines a list of references has."""

# A density estimate, not a parse: the chunk is Markdown as written, and a link that this misses
# only leaves the passage where its score puts it.
_LINK = re.compile(r"!?\[[^\]\n]{0,500}\]\([^)\n]{0,2000}\)|\[\[[^\]\n]{1,1000}\]\]")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.MULTILINE)
_SPACE = re.compile(r"\s+")
_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,3}[.)])\s")
# A line that points at pages: a leader of dots (four or more, spaced or not), or a list of two
# or more numbers at its end (``237, 1172``; ``g326, h785``: a code line's number), or numbers
# alone (an index entry's pages wrapped to the next line).
_LEADER = re.compile(r"(?:\.\s?){4,}")
_PAGES_AT_END = re.compile(r"(?:^|\s)[a-z]?\d{1,6}(?:\s*[,–-]\s*[a-z]?\d{1,6})+,?\s*$")
_PAGE_LIST_CHARS = frozenset("0123456789,–- \t")
_NUMBER_END = re.compile(r"\d,?[ \t]*$", re.MULTILINE)
PAGES_TAIL = 120
"""How much of a line's end is read for its page numbers: a list of pages is short, and reading
no more keeps a hostile line of numbers (``1, 1, 1, … x``) from costing time squared."""


def link_share(text: str) -> float:
    """The share of ``text``'s characters (headings and white space aside) inside links."""
    body = _SPACE.sub("", _HEADING_LINE.sub("", text))
    if not body:
        return 0.0
    linked = sum(len(_SPACE.sub("", match.group())) for match in _LINK.finditer(text))
    return min(1.0, linked / len(body))


def is_link_list(text: str, link_lines: Collection[int] = (), first_line: int = 1) -> bool:
    """Whether ``text`` is mostly links: at least two, and :data:`LINK_LIST_SHARE` of it; or,
    given ``link_lines`` (the lines of its file that hold a link; ``text`` starts at line
    ``first_line``), a list of short items of which :data:`LINK_LINE_SHARE` hold a link."""
    if len(_LINK.findall(text)) >= 2 and link_share(text) >= LINK_LIST_SHARE:
        return True
    if not link_lines:
        return False
    lines = [(number, line) for number, line in enumerate(text.splitlines(), first_line)]
    filled = [line.strip() for _number, line in lines if line.strip()]
    linked = sum(1 for number, line in lines if number in link_lines and _LIST_ITEM.match(line))
    return (
        linked >= 2
        and linked >= LINK_LINE_SHARE * len(filled)
        and sum(map(len, filled)) < LINK_LINE_CHARS * len(filled)
    )


def is_reference_list(text: str) -> bool:
    """Whether ``text`` reads as a table of contents or an index: :data:`REFERENCE_LINES` lines
    or more, and :data:`REFERENCE_LINE_SHARE` of its non-blank lines, point at pages."""
    # Each such line ends with a number or holds a leader: too few of either rules it out cheaply.
    if len(_NUMBER_END.findall(text)) + text.count(". .") + text.count("....") < REFERENCE_LINES:
        return False
    filled = [line.strip() for line in text.splitlines() if line.strip()]
    pointing = sum(1 for line in filled if _points_at_pages(line))
    return pointing >= REFERENCE_LINES and pointing >= REFERENCE_LINE_SHARE * len(filled)


def _points_at_pages(line: str) -> bool:
    """Whether a (stripped, non-blank) line joins an entry to pages, or holds only pages."""
    if _LEADER.search(line) or _PAGES_AT_END.search(line[-PAGES_TAIL:]):
        return True
    return _PAGE_LIST_CHARS.issuperset(line) and any(char.isdigit() for char in line)


class Scored(Protocol):
    @property
    def score(self) -> float: ...


S = TypeVar("S", bound=Scored)


def content_first(passages: Sequence[S], text_of: Callable[[S], str | None]) -> list[S]:
    """``passages`` of one file (best first) reordered so that a link list follows every
    content passage scored within :data:`LINK_LIST_PENALTY` of it; ``text_of`` gives a
    passage's text (None: unknown, left where it is)."""

    def key(position: int) -> tuple[float, int]:
        passage = passages[position]
        text = text_of(passage)
        penalty = 0.0 if text is None else list_penalty(text)
        # Scores as shown (4 places): passages that tie keep their order (by position).
        return (-round(passage.score - penalty, 4), position)

    return [passages[i] for i in sorted(range(len(passages)), key=key)]


@lru_cache(maxsize=512)
def list_penalty(text: str) -> float:
    """What a passage of ``text`` loses to the content around it: :data:`LINK_LIST_PENALTY`
    for a link list, :data:`REFERENCE_LIST_PENALTY` for a table of contents or an index, else
    0. Remembered: each key typed into a search weighs mostly the passages the key before it
    weighed, some 60 of them, at 50 µs each."""
    if is_link_list(text):
        return LINK_LIST_PENALTY
    if is_reference_list(text):
        return REFERENCE_LIST_PENALTY
    return 0.0
