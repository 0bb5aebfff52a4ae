"""The folders an MCP server answers for: one, or several served as named collections.

Each folder has its own index, kept current by its own :class:`~explorer.mcp.keeper.IndexKeeper`,
and its own :class:`~explorer.mcp.freshness.Freshness`. :class:`ServedFolders` picks the folder a
path-taking tool works in (the ``collection`` argument, or the only folder holding the path),
and makes the core's :class:`~explorer.core.retrieval.collections.Collections` of the indexes
open now for searching and related files across them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from explorer.core.errors import ExplorerError
from explorer.core.ingest.safe_paths import resolve_inside
from explorer.core.retrieval.collections import Collection, Collections
from explorer.core.retrieval.scopes import Scope
from explorer.mcp.freshness import Freshness
from explorer.mcp.keeper import IndexKeeper
from explorer.settings.config import Settings


class AmbiguousPath(ExplorerError):
    """A path a tool cannot place in one collection; the message says what to pass."""


@dataclass(frozen=True, eq=False)
class ServedFolder:
    """One folder the server answers for: its collection name, settings, keeper, freshness
    (each one is itself: compared and hashed by identity)."""

    name: str
    settings: Settings
    keeper: IndexKeeper
    freshness: Freshness

    @property
    def gone(self) -> bool:
        """Whether the folder is gone from disk (deleted or moved away) since it was served."""
        return self.freshness.folder_gone()


class ServedFolders:
    """The folders of one server, in the order given, and the config file's scopes."""

    def __init__(self, folders: Sequence[ServedFolder], scopes: Sequence[Scope] = ()) -> None:
        if not folders:
            raise ValueError("a server needs at least one folder")
        self._folders = list(folders)
        self.scopes = tuple(scopes)

    def __iter__(self) -> Iterator[ServedFolder]:
        return iter(self._folders)

    @property
    def first(self) -> ServedFolder:
        return self._folders[0]

    @property
    def several(self) -> bool:
        """Whether answers name collections (more than one folder)."""
        return len(self._folders) > 1

    @property
    def names(self) -> list[str]:
        return [folder.name for folder in self._folders]

    def named(self, name: str) -> ServedFolder:
        """The folder of collection ``name`` (without regard to case)."""
        for folder in self._folders:
            if folder.name.casefold() == name.casefold():
                return folder
        raise AmbiguousPath(f"no collection {name!r}; the collections are {self._listed()}")

    def pick(self, collection: str | None, path: str | None = None) -> ServedFolder:
        """The folder a tool works in: ``collection``'s; else the only folder; else the only
        one holding ``path`` on disk (one line saying to pass ``collection`` otherwise)."""
        if collection is not None:
            return self.named(collection)
        if not self.several:
            return self.first
        if path is None:
            raise AmbiguousPath(f"several collections are open ({self._listed()}): give collection")
        holding = [folder for folder in self._folders if _holds(folder, path)]
        if len(holding) == 1:
            return holding[0]
        if not holding:
            raise AmbiguousPath(f"{path}: no such file in any collection ({self._listed()})")
        names = ", ".join(folder.name for folder in holding)
        raise AmbiguousPath(f"{path} is in several collections ({names}): give collection")

    def collections(self, folders: Sequence[ServedFolder] | None = None) -> Collections:
        """The core's collections over the indexes open now, of ``folders`` (default: every
        folder), opened by their keepers, which keep them: never close this object."""
        chosen = self._folders if folders is None else folders
        return Collections(
            [Collection(folder.name, folder.keeper.index()) for folder in chosen], self.scopes
        )

    def present(self) -> list[ServedFolder]:
        """The folders on disk now (not deleted or moved away)."""
        return [folder for folder in self._folders if not folder.gone]

    def _listed(self) -> str:
        return ", ".join(self.names)


def _holds(folder: ServedFolder, path: str) -> bool:
    """Whether ``path`` names something inside ``folder`` that exists (a path that leaves the
    folder is no file of it)."""
    try:
        return resolve_inside(folder.settings.root, path).real_path.exists()
    except (ExplorerError, OSError):
        return False
