"""``.gitignore`` patterns (and the ``exclude`` setting, written the same way), as git reads them.

:meth:`IgnorePatterns.from_lines` parses the lines of one ``.gitignore``: comments, blank lines,
trailing spaces (kept when escaped), ``!`` negation, a trailing ``/`` for folders only, anchoring
(a pattern with a ``/`` before its end is relative to the file's folder, one without matches a
name at any depth), ``**`` as a whole segment (any number of folders: leading, middle or
trailing), ``*``, ``?``, bracket expressions (ranges, ``!``/``^`` negation, POSIX classes such as
``[[:digit:]]``) and backslash escapes. A pattern git would never match (an unclosed ``[``, a
trailing backslash, an unknown class) matches nothing here either.

Each pattern is run by :class:`~explorer.core.ingest.wildcards.Wildcard`, which never
backtracks: any pattern, sixteen stars or a hundred thousand, takes time linear in the path.

:meth:`IgnorePatterns.verdict` judges one path, relative to the file's folder, by the last
pattern that matches it, as git does. Like git it judges the path itself: a caller that walks
down a tree checks each folder on the way (a file inside an ignored folder is never reached).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from explorer.core.errors import ExplorerError
from explorer.core.ingest.wildcards import (
    ANY,
    FOLDERS,
    ONE,
    STAR,
    CharClass,
    Token,
    TokenKind,
    Wildcard,
    char_token,
)

__all__ = ["IgnorePattern", "IgnorePatterns"]

POSIX_CLASSES: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "alnum": ("", (("a", "z"), ("A", "Z"), ("0", "9"))),
    "alpha": ("", (("a", "z"), ("A", "Z"))),
    "blank": (" \t", ()),
    "cntrl": ("\x7f", (("\x00", "\x1f"),)),
    "digit": ("", (("0", "9"),)),
    "graph": ("", (("!", "~"),)),
    "lower": ("", (("a", "z"),)),
    "print": ("", ((" ", "~"),)),
    "punct": ("", (("!", "/"), (":", "@"), ("[", "`"), ("{", "~"))),
    "space": (" \t\n\r\f\v", ()),
    "upper": ("", (("A", "Z"),)),
    "xdigit": ("", (("0", "9"), ("a", "f"), ("A", "F"))),
}
"""The bracket classes git knows (``[:alpha:]``): extra characters and ranges, ASCII as git's."""


class _Never(ExplorerError):
    """A pattern git parses but never matches (an unclosed ``[``, a trailing ``\\``); caught
    within this module, never shown."""


class _Item(Enum):
    """Pieces of a pattern before ``**`` segments are recognised."""

    SLASH = "/"
    STAR = "*"
    """One star."""
    STARS = "**"
    """Two stars or more: any number of folders when they fill a segment, else one star."""


@dataclass(frozen=True)
class IgnorePattern:
    """One pattern line of a ``.gitignore``, compiled."""

    line: int
    """1-based line number in its file."""
    negated: bool
    """A ``!`` pattern: a match re-includes the path."""
    folders_only: bool
    """A pattern ending in ``/``: matches folders, never files."""
    name_only: bool
    """A pattern without a ``/`` (but a trailing one): matches the last name at any depth."""
    wildcard: Wildcard

    def matches(self, rel_path: str, is_dir: bool) -> bool:
        """True if the pattern matches ``rel_path`` (relative to its file's folder) itself."""
        if self.folders_only and not is_dir:
            return False
        subject = rel_path.rsplit("/", 1)[-1] if self.name_only else rel_path
        return self.wildcard.matches(subject)


class IgnorePatterns:
    """The patterns of one ``.gitignore`` (or of the ``exclude`` setting), in file order."""

    def __init__(self, patterns: Iterable[IgnorePattern]) -> None:
        self.patterns = tuple(patterns)

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> IgnorePatterns:
        """Parse the lines of a ``.gitignore``; lines that can never match are left out."""
        patterns = []
        for number, line in enumerate(lines, start=1):
            pattern = parse_line(line, number)
            if pattern is not None:
                patterns.append(pattern)
        return cls(patterns)

    def verdict(self, rel_path: str, is_dir: bool) -> bool | None:
        """True if ``rel_path`` is ignored, False if a ``!`` pattern re-includes it, None if no
        pattern matches it (the last matching pattern decides)."""
        for pattern in reversed(self.patterns):
            if pattern.matches(rel_path, is_dir):
                return not pattern.negated
        return None

    def ignores(self, rel_path: str, is_dir: bool) -> bool:
        """True if ``rel_path`` is ignored by these patterns."""
        return bool(self.verdict(rel_path, is_dir))


@lru_cache(maxsize=256)
def parse_line(line: str, number: int = 1) -> IgnorePattern | None:
    """The pattern on one ``.gitignore`` line, or None (blank, a comment, or never matching).

    Remembered: a scan and the comparison with the manifest that follows it (``status``) read
    the same files, and a hostile line of 100,000 characters takes a good part of a second to
    compile. A compiled pattern is immutable but for its DFA's learned moves, which are
    learned under a lock."""
    text = _without_trailing_spaces(line.rstrip("\r\n"))
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    folders_only = text.endswith("/")
    if folders_only:
        text = text[:-1]
    if not text:
        return None  # "/" or "!/": git matches nothing
    try:
        items = _items(text)
    except _Never:
        return None
    name_only = _Item.SLASH not in items
    if not name_only and items[0] is _Item.SLASH:
        items = items[1:]  # a leading "/" anchors; the pattern is relative to the folder anyway
    tokens = _tokens(items)
    return IgnorePattern(number, negated, folders_only, name_only, Wildcard(tokens))


def _without_trailing_spaces(text: str) -> str:
    """``text`` without its trailing spaces, but those escaped with a backslash."""
    end, index = 0, 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            index += 2
            end = index
            continue
        index += 1
        if char != " ":
            end = index
    return text[:end]


_PIECE = re.compile(r"(\\)|(/)|(\*+)|(\?)|(\[)|[^\\/*?\[]+", re.DOTALL)
"""One piece of a pattern: a backslash, a slash, a run of stars, a ``?``, a ``[`` or a run of
plain characters (the groups, in that order, tell which)."""


def _items(text: str) -> list[Token | _Item]:
    """``text`` read into tokens, slashes and runs of stars (``**`` is decided later)."""
    items: list[Token | _Item] = []
    index, end = 0, len(text)
    while index < end:
        piece = _PIECE.match(text, index)
        assert piece is not None  # every character starts one piece
        which = piece.lastindex
        if which is None:  # plain characters
            items.extend(map(char_token, piece.group()))
            index = piece.end()
        elif which == 1:  # a backslash
            if index + 1 == end:
                raise _Never  # a trailing backslash escapes nothing: git never matches
            escaped = text[index + 1]
            items.append(_Item.SLASH if escaped == "/" else char_token(escaped))
            index += 2
        elif which == 2:
            items.append(_Item.SLASH)
            index += 1
        elif which == 3:
            items.append(_Item.STAR if piece.end() - index == 1 else _Item.STARS)
            index = piece.end()
        elif which == 4:
            items.append(ONE)
            index += 1
        else:
            token, index = _bracket(text, index)
            items.append(token)
    return items


def _tokens(items: list[Token | _Item]) -> list[Token]:
    """Wildcard tokens: a run of two stars or more that fills a segment is any number of
    folders; any other run of stars is one ``*``."""
    tokens: list[Token] = []
    slash, star, stars = _Item.SLASH, _Item.STAR, _Item.STARS
    last = len(items) - 1
    skip_slash = False  # the "/" after a "**" that became FOLDERS is part of it
    for index, item in enumerate(items):
        if item.__class__ is Token:
            tokens.append(item)
        elif item is slash:
            if skip_slash:
                skip_slash = False
            else:
                tokens.append(char_token("/"))
        elif item is stars and (index == 0 or items[index - 1] is slash):
            if index == last:
                tokens.append(ANY)  # "dir/**": everything inside; "**": everything
            elif items[index + 1] is slash:
                tokens.append(FOLDERS)  # "**/" and "/**/": zero or more folders
                skip_slash = True
            else:
                tokens.append(STAR)
        else:
            assert item is star or item is stars
            tokens.append(STAR)
    return tokens


def _bracket(text: str, start: int) -> tuple[Token, int]:
    """The bracket expression at ``text[start] == "["`` and the index after its ``]``.

    As git's wildmatch: ``!`` or ``^`` first negates, the first character is a member even if
    it is ``]``, ``a-z`` is a range, ``\\`` escapes, ``[:name:]`` is a POSIX class. Raises
    :class:`_Never` when the expression is not closed or names an unknown class.
    """
    index = start + 1
    negated = index < len(text) and text[index] in "!^"
    if negated:
        index += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    previous = ""
    first = True
    while True:
        if index >= len(text):
            raise _Never
        char = text[index]
        if char == "]" and not first:
            break
        first = False
        if char == "\\":
            index += 1
            if index >= len(text):
                raise _Never
            char = text[index]
            chars.add(char)
            previous = char
        elif char == "-" and previous and index + 1 < len(text) and text[index + 1] != "]":
            index += 1
            high = text[index]
            if high == "\\":
                index += 1
                if index >= len(text):
                    raise _Never
                high = text[index]
            ranges.append((previous, high))
            previous = ""
        elif char == "[" and text.startswith(":", index + 1):
            close = text.find("]", index + 2)
            if close == -1:
                raise _Never
            if text[close - 1] == ":" and close - 1 > index + 1:
                name = text[index + 2 : close - 1]
                if name not in POSIX_CLASSES:
                    raise _Never
                extra, spans = POSIX_CLASSES[name]
                chars.update(extra)
                ranges.extend(spans)
                previous = ""
                index = close
            else:  # no ":]": the "[" is a member like any other
                chars.add(char)
                previous = char
        else:
            chars.add(char)
            previous = char
        index += 1
    char_class = CharClass(frozenset(chars), tuple(ranges), negated, slash_allowed=False)
    return Token(TokenKind.CLASS, char_class=char_class), index + 1
