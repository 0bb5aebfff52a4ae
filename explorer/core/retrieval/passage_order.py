"""Which passages of a result file come first: content before lists of links.

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
:data:`LINK_LIST_PENALTY` below it. Only the order of a file's passages changes: the file's
score, and so the ranking of files, does not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
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

# A density estimate, not a parse: the chunk is Markdown as written, and a link that this misses
# only leaves the passage where its score puts it.
_LINK = re.compile(r"!?\[[^\]\n]{0,500}\]\([^)\n]{0,2000}\)|\[\[[^\]\n]{1,1000}\]\]")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.MULTILINE)
_SPACE = re.compile(r"\s+")
_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,3}[.)])\s")


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
        penalty = LINK_LIST_PENALTY if text is not None and is_link_list(text) else 0.0
        # Scores as shown (4 places): passages that tie keep their order (by position).
        return (-round(passage.score - penalty, 4), position)

    return [passages[i] for i in sorted(range(len(passages)), key=key)]
