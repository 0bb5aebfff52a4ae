"""Which files a search may look at: path globs, front-matter tags and versions, and what
to leave out (exclude globs).

A filter resolves to the set of indexed files it allows *before* ranking, and both legs search
only that set, so a filter never shrinks a global top-k after the fact. Within a kind the values
are alternatives (``--tag backup --tag restore``: a file tagged either), and kinds combine (a
path and a tag: a file under the path that carries the tag). Tags and versions compare
case-insensitively and whole (``--version 1.5`` matches ``version: "1.5"``, not ``1.5.1``).
Exclude patterns are prefixes or globs as paths are (``drafts/``, ``**/*.log``); a file that
matches any of them is left out, whatever else it matches.

The same filters may be typed into a query as words: ``path:guides/``, ``tag:backup``,
``version:1.5``, ``exclude:drafts/`` (:func:`parse_filter_words`), in the TUI and on the
command line alike. So may the collections a search over several folders keeps, and its named
scopes: ``collection:notes``, ``scope:curator`` (resolved by
:class:`~explorer.core.retrieval.collections.Collections`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.core.safe_text import echoed
from explorer.core.safe_text import quoted as quoted_value

if TYPE_CHECKING:
    from explorer.core.store.keywords import KeywordIndex

_FILTER_WORD = re.compile(
    r'(?:^|(?<=\s))(path|tag|version|exclude|collection|scope):(?:"([^"]*)"?|(\S*))'
)
"""A filter word: ``tag:backup``, or quoted for a value with spaces (``tag:"Data, AI"``); a
quote not yet closed runs to the end of the text (the value is still being typed)."""


@dataclass(frozen=True)
class FileFilter:
    """Path globs or prefixes, tags and versions a file must match (each kind: any value), and
    path globs or prefixes it must not match."""

    paths: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    """Prefixes or globs (as ``paths``) of files left out."""

    @property
    def active(self) -> bool:
        return bool(self.paths or self.tags or self.versions or self.exclude)

    def select(self, keywords: KeywordIndex) -> list[str] | None:
        """The sorted indexed paths the filter allows, or None when it allows every file."""
        if not self.active:
            return None
        # Kept until the manifest changes: typing a query with a filter asks on every key, and
        # matching 100,000 chunks' 11,000 paths took ~40 ms (benchmarks/scale.py).
        return list(keywords.derived(("file filter", self), lambda: self._select(keywords)))

    def _select(self, keywords: KeywordIndex) -> list[str]:
        from explorer.core.retrieval.query import PathFilter
        from explorer.core.store.file_facts import FileField

        allowed = set(keywords.paths())
        if self.tags:
            allowed &= keywords.facts.paths_with(FileField.TAG, self.tags)
        if self.versions:
            allowed &= keywords.facts.paths_with(FileField.VERSION, self.versions)
        if self.exclude:
            excluded = PathFilter(self.exclude)
            allowed = {path for path in allowed if not excluded.matches(path)}
        return PathFilter(self.paths).select(allowed)

    def describe(self) -> str:
        """The filter in words (``guides/ and tag backup or restore``)."""
        from explorer.core.retrieval.query import PathFilter

        parts = []
        if self.paths:
            parts.append(PathFilter(self.paths).describe())
        if self.tags:
            tags = " or ".join(map(_shown, self.tags))
            parts.append(("tag " if len(self.tags) == 1 else "tags ") + tags)
        if self.versions:
            parts.append("version " + " or ".join(map(_shown, self.versions)))
        excluded = PathFilter(self.exclude).describe() if self.exclude else ""
        if excluded and not parts:
            return f"all files but {excluded}"
        if excluded:
            parts.append(f"not {excluded}")
        return " and ".join(parts) if parts else "all files"

    def words(self) -> tuple[str, ...]:
        """The filter as query words (``guides/``, ``tag:backup``): how a status line shows it."""
        return (
            *(_quoted(path) for path in self.paths),
            *(f"tag:{_quoted(tag)}" for tag in self.tags),
            *(f"version:{_quoted(version)}" for version in self.versions),
            *(f"exclude:{_quoted(pattern)}" for pattern in self.exclude),
        )


def _quoted(value: str) -> str:
    """A filter value as it would be typed: in quotes when it holds white space."""
    return f'"{value}"' if any(char.isspace() for char in value) else value


@dataclass(frozen=True)
class ParsedQuery:
    """Typed text split into the words to search for and the filter words in it."""

    query: str
    filter: FileFilter
    collections: tuple[str, ...] = ()
    """The ``collection:`` words: only these collections (any of them)."""
    scopes: tuple[str, ...] = ()
    """The ``scope:`` words: only the files of these named scopes (any of them)."""


def parse_filter_words(text: str) -> ParsedQuery:
    """Take ``path:``, ``tag:``, ``version:``, ``exclude:``, ``collection:`` and ``scope:``
    words out of ``text``.

    A value in double quotes may hold spaces (``tag:"Data, AI"``). An empty value (``tag:``
    being typed) is dropped. A trailing space of the query is kept (it
    ends the last word for prefix matching); other runs of white space fold to one.
    """
    found: dict[str, list[str]] = {
        kind: [] for kind in ("path", "tag", "version", "exclude", "collection", "scope")
    }
    for kind, quoted, bare in _FILTER_WORD.findall(text):
        value = quoted.strip() or bare
        if value and value not in found[kind]:
            found[kind].append(value)
    query = _FILTER_WORD.sub(" ", text)
    trailing = " " if query[-1:].isspace() and query.strip() else ""
    return ParsedQuery(
        " ".join(query.split()) + trailing,
        FileFilter(
            tuple(found["path"]),
            tuple(found["tag"]),
            tuple(found["version"]),
            tuple(found["exclude"]),
        ),
        tuple(found["collection"]),
        tuple(found["scope"]),
    )


def _shown(value: str) -> str:
    """A tag or version as a note repeats it; a blank one in quotes (``tag ''``), which
    would otherwise read as no tag at all."""
    return echoed(value) if value.strip() else quoted_value(value)
