"""Named scopes and the names of collections: what a configuration file may name.

A *scope* is a saved set of files (envoy's named indexes): path globs or prefixes, extensions and
the collections it covers, with a description that tells a person or an agent what it holds.
``scope:NAME`` in a query (or ``--scope NAME``) keeps its files. This module stays light (no
index, no model): the configuration file is read before anything is opened.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from explorer.core.errors import ExplorerError
from explorer.core.ingest.extensions import extension_names
from explorer.core.retrieval.query import PathFilter
from explorer.core.safe_text import quoted

NAME = re.compile(r"(?!\.+$)[\w.-]+")
"""What a collection's or a scope's name may hold: letters, digits, ``_``, ``.`` and ``-``, and
not dots alone (``.`` and ``..`` read as folders, in ``collection:..`` as on a command line)."""


class CollectionsError(ExplorerError, ValueError):
    """Collections that cannot be opened or used together; the message says why."""


def check_name(name: str, what: str = "collection") -> str:
    """``name`` if a collection (or scope) may be called so; else :class:`CollectionsError`."""
    if not NAME.fullmatch(name):
        raise CollectionsError(
            f"{what} name {quoted(name)}: use letters, digits, '_', '.' and '-' (no spaces or '/',"
            " not dots alone)"
        )
    return name


@dataclass(frozen=True)
class Scope:
    """A named set of files: path globs or prefixes, extensions, and which collections."""

    name: str
    paths: tuple[str, ...] = ()
    """Prefixes or globs as ``--path`` takes them (any of them); none: every path."""
    extensions: tuple[str, ...] = ()
    """File extensions (lowercase, no dot; any of them); none: every extension."""
    collections: tuple[str, ...] = ()
    """The collections the scope covers; none: every collection."""
    description: str = ""
    """What the scope holds, for a person or an agent choosing one."""

    def __post_init__(self) -> None:
        check_name(self.name, "scope")
        PathFilter(self.paths)  # a bad glob is refused when the scope is made
        object.__setattr__(
            self, "extensions", tuple(e.lower().lstrip(".") for e in self.extensions)
        )

    def covers(self, collection: str) -> bool:
        """Whether the scope looks at ``collection``."""
        return not self.collections or collection.casefold() in {
            name.casefold() for name in self.collections
        }

    def select(self, paths: Iterable[str]) -> set[str]:
        """The ``paths`` (of one collection it covers) the scope keeps."""
        globs = PathFilter(self.paths)
        wanted = set(self.extensions)
        return {
            path
            for path in paths
            if globs.matches(path) and (not wanted or not wanted.isdisjoint(extension_names(path)))
        }
