"""The folders of one window, named by one kind of path.

A window opens one folder or several (collections). The screen and the widgets name a file by
one string, its *window path*: with one folder, the path relative to that folder, as everywhere
else; with several, the collection's name, a slash and the path relative to that folder
(``vault/Ideas/Backups.md``). The tree then shows each folder as a top-level node under its
collection name, and the navigation history, the recent files and the session keep one string
per place, whatever the number of folders.

:class:`Workspace` turns window paths into a folder and its own path and back, and answers what
the widgets ask (the manifest, a search, links, related files, a clicked link's destination,
the file on disk) from the right index: several folders through the core's
:class:`~explorer.core.retrieval.collections.Collections`, so a search is one ranking over every
folder and related files cross folders; links stay within their folder, as the core keeps them.

Indexes open on threads, one per folder, and attach as they come; widgets ask from worker
threads meanwhile. The collections are never changed in place: attaching or detaching builds a
new :class:`Collections` and swaps it in, so a worker keeps the set it started with.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.core.ingest.root_paths import resolve_inside_root
from explorer.core.retrieval.scopes import Scope
from explorer.settings.config import NamedFolder, Settings

if TYPE_CHECKING:
    from explorer.core.retrieval.collections import Collections
    from explorer.core.retrieval.links import FileLinks, Link
    from explorer.core.retrieval.related import RelatedFile
    from explorer.core.retrieval.search import SearchRequest, SearchResponse
    from explorer.core.store.index import Index
    from explorer.core.store.manifest_records import FileRecord
    from explorer.tui.link_following import Destination


class NotInWindow(ExplorerError):
    """A window path names no folder of the window (a folder removed meanwhile)."""


@dataclass(frozen=True)
class WindowPath:
    """A window path split: the folder that holds the file and the path within it."""

    folder: NamedFolder
    path: str


class Workspace:
    """The folders of one window, their indexes as they open, and window paths."""

    def __init__(self, folders: Sequence[NamedFolder], scopes: Sequence[Scope] = ()) -> None:
        if not folders:
            raise ExplorerError("a window needs a folder")
        self._folders: list[NamedFolder] = list(folders)
        self.scopes = tuple(scopes)
        self._indexes: dict[str, Index] = {}
        self._collections: Collections | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(
        cls, folders: Settings | Sequence[NamedFolder], scopes: Sequence[Scope] = ()
    ) -> Workspace:
        """The workspace of one folder's settings (named after its directory) or of named
        folders."""
        if isinstance(folders, Settings):
            from explorer.core.retrieval.collections import folder_name

            return cls([NamedFolder(folder_name(folders.root), folders)], scopes)
        return cls(folders, scopes)

    # -- the folders ------------------------------------------------------------------------
    @property
    def folders(self) -> list[NamedFolder]:
        return list(self._folders)

    @property
    def several(self) -> bool:
        """Window paths start with the collection's name (more than one folder is open)."""
        return len(self._folders) > 1

    @property
    def first(self) -> NamedFolder:
        return self._folders[0]

    @property
    def roots(self) -> list[Path]:
        return [folder.settings.root for folder in self._folders]

    @property
    def title(self) -> str:
        """The window's name: its folder's, or its collections' names."""
        if not self.several:
            return self.first.settings.root.name
        return " + ".join(folder.name for folder in self._folders)

    def folder(self, name: str) -> NamedFolder:
        for folder in self._folders:
            if folder.name.casefold() == name.casefold():
                return folder
        raise NotInWindow(f"no folder {name!r} is open in this window")

    def folder_at(self, root: Path) -> NamedFolder:
        """The folder ``root`` (an existing directory) would open as: the name the config file
        gives it, else its directory's, made distinct from the open folders' names; with the
        first folder's model and Chroma server. :class:`ExplorerError` when it is open already."""
        from explorer.core.retrieval.collections import distinct_names
        from explorer.settings.config import open_folders

        root = root.resolve()
        self._refuse_open(root)
        first = self.first.settings
        folder = open_folders([root], model=first.model, chroma_url=first.chroma_url).folders[0]
        taken = [other.name for other in self._folders]
        if folder.name.casefold() in {name.casefold() for name in taken}:
            folder = NamedFolder(distinct_names([root], taken)[0], folder.settings)
        return folder

    def _refuse_open(self, root: Path, name: str | None = None) -> None:
        from explorer.core.retrieval.collections import check_apart

        for other in self._folders:
            if name is not None and other.name.casefold() == name.casefold():
                raise ExplorerError(f"a folder named {name!r} is open already")
            if other.settings.root == root:
                raise ExplorerError(f"{root} is open already, as {other.name}")
        opened = [(folder.name, folder.settings.root) for folder in self._folders]
        check_apart([*opened, (name or root.name, root)])

    def add_folder(self, folder: NamedFolder) -> Callable[[str], str | None]:
        """Open one more folder (its index attaches when it has opened); returns how the
        window paths of before read now (:meth:`renamed_from`)."""
        self._refuse_open(folder.settings.root, folder.name)
        before = self.folders
        self._folders.append(folder)
        return self.renamed_from(before)

    def remove_folder(self, name: str) -> tuple[NamedFolder, Callable[[str], str | None]]:
        """Close a folder of the window (the last one stays); returns it, and how the window
        paths of before read now (None: a path of the folder closed)."""
        folder = self.folder(name)
        if len(self._folders) == 1:
            raise ExplorerError("the window's last folder cannot be removed")
        self.detach(folder.name)
        before = self.folders
        self._folders.remove(folder)
        return folder, self.renamed_from(before)

    def renamed_from(self, before: Sequence[NamedFolder]) -> Callable[[str], str | None]:
        """How a window path of a window on the folders ``before`` reads in this one (None:
        its folder is no longer open)."""
        open_names = {folder.name for folder in self._folders}

        def renamed(path: str) -> str | None:
            if len(before) > 1:
                name, _, inner = path.partition("/")
            else:
                name, inner = before[0].name, path
            return self.window_path(name, inner) if name in open_names else None

        return renamed

    # -- window paths -----------------------------------------------------------------------
    def window_path(self, name: str, path: str) -> str:
        """The window path of ``path`` in the folder called ``name``."""
        return f"{self.folder(name).name}/{path}" if self.several else path

    def window_paths(self, name: str, paths: Iterable[str]) -> frozenset[str]:
        return frozenset(self.window_path(name, path) for path in paths)

    def split(self, path: str) -> WindowPath:
        """The folder and folder-relative path a window path names (:class:`NotInWindow` when
        it names no open folder)."""
        if not self.several:
            return WindowPath(self.first, path)
        name, _, inner = path.partition("/")
        return WindowPath(self.folder(name), inner)

    def absolute(self, path: str) -> Path:
        """The file a window path names on disk; :class:`NotInWindow`, or
        :class:`~explorer.core.ingest.root_paths.OutsideRoot` when it leads out of its folder
        and the folder's settings do not allow that."""
        place = self.split(path)
        settings = place.folder.settings
        return resolve_inside_root(
            settings.root, place.path, allow_outside_links=settings.allow_outside_links
        )

    def is_file(self, path: str) -> bool:
        """Whether a window path names a file on disk (inside its folder)."""
        try:
            return self.absolute(path).is_file()
        except ExplorerError:
            return False

    # -- the indexes ------------------------------------------------------------------------
    def attach(self, name: str, index: Index) -> None:
        """The folder ``name``'s index has opened: search it from now on. Refused
        (:class:`~explorer.core.retrieval.scopes.CollectionsError`) when its model is not the
        other folders'."""
        folder = self.folder(name)
        with self._lock:
            indexes = {**self._indexes, folder.name: index}
            self._collections = self._collections_of(indexes)
            self._indexes = indexes

    def detach(self, name: str) -> None:
        """The folder ``name``'s index closes: nothing asks it any more."""
        with self._lock:
            indexes = {key: value for key, value in self._indexes.items() if key != name}
            self._collections = self._collections_of(indexes) if indexes else None
            self._indexes = indexes

    def _collections_of(self, indexes: dict[str, Index]) -> Collections:
        from explorer.core.retrieval.collections import Collection, Collections

        ordered = [f.name for f in self._folders if f.name in indexes]
        return Collections([Collection(name, indexes[name]) for name in ordered], self.scopes)

    @property
    def opened(self) -> bool:
        """At least one folder's index is open."""
        return bool(self._indexes)

    def index_of(self, name: str) -> Index | None:
        return self._indexes.get(name)

    @property
    def indexes(self) -> dict[str, Index]:
        """The open indexes, by folder name."""
        return dict(self._indexes)

    def opened_for(self, path: str) -> bool:
        """Whether the index of the folder that holds a window path is open."""
        try:
            return self._index_for(path)[1] is not None
        except NotInWindow:
            return False

    def _index_for(self, path: str) -> tuple[WindowPath, Index | None]:
        place = self.split(path)
        return place, self._indexes.get(place.folder.name)

    # -- what the widgets ask ---------------------------------------------------------------
    def files(self) -> tuple[dict[str, FileRecord], dict[str, int]]:
        """Every open folder's manifest by window path, and the counts of them all."""
        records: dict[str, FileRecord] = {}
        counts: dict[str, int] = {}
        for name, index in self.indexes.items():
            for path, record in index.keywords.files().items():
                window = self.window_path(name, path)
                records[window] = replace(record, path=window) if self.several else record
            for key, value in index.keywords.counts().items():
                counts[key] = counts.get(key, 0) + value
        return records, counts

    def search(self, request: SearchRequest) -> SearchResponse:
        """One ranking over every open folder (one folder: its index, as ``explorer search``);
        each hit's path a window path."""
        from explorer.core.retrieval.search import search

        collections = self._collections
        if collections is None:
            raise ExplorerError("the index is still opening")
        if not self.several and not (request.collections or request.scopes):
            return search(collections.get(self.first.name).index, request)
        response = collections.search(request)
        if self.several:
            response.results = [
                replace(hit, path=self.window_path(hit.collection, hit.path))
                for hit in response.results
            ]
        return response

    def rank_words_ahead(self, request: SearchRequest) -> None:
        """Between two keys: each folder keeps the scores of the query's whole words, which the
        next word's search adds to (:func:`~explorer.core.retrieval.search.rank_words_ahead`)."""
        from explorer.core.retrieval.search import rank_words_ahead

        for index in self.indexes.values():
            rank_words_ahead(index, request)

    def count_vectors(self) -> int:
        """The chunk vectors of every open folder."""
        return sum(index.vectors.count_chunks() for index in self.indexes.values())

    def load_query_path(self) -> None:
        """Warm the query encoder every folder's search shares."""
        collections = self._collections
        if collections is None:
            return
        load = getattr(collections.embedder, "load_query_path", None)
        if load is not None:
            load()

    def links(self, path: str) -> FileLinks:
        """The links and backlinks of a window path, within its folder; paths window paths."""
        from explorer.core.retrieval.links import file_links

        place, index = self._index_for(path)
        if index is None:
            raise ExplorerError(f"the index of {place.folder.name} is still opening")
        found = file_links(index, place.path)
        if not self.several:
            return found
        name = place.folder.name
        return replace(
            found,
            path=path,
            outgoing=[self._link_in(name, link) for link in found.outgoing],
            backlinks=[self._link_in(name, link) for link in found.backlinks],
        )

    def _link_in(self, name: str, link: Link) -> Link:
        from explorer.core.retrieval.links import LinkState

        target = link.target
        if link.state is not LinkState.OUTSIDE_ROOT:
            target = self.window_path(name, target)
        return replace(link, source=self.window_path(name, link.source), target=target)

    def related(self, path: str, limit: int) -> list[RelatedFile]:
        """The files most related to a window path: in every open folder (by content, one
        model), paths window paths."""
        from explorer.core.retrieval.related import related_files

        place, index = self._index_for(path)
        if index is None:
            raise ExplorerError(f"the index of {place.folder.name} is still opening")
        collections = self._collections
        if not self.several or collections is None:
            return related_files(index, place.path, limit)
        return [
            replace(found.related, path=self.window_path(found.collection, found.related.path))
            for found in collections.related(place.folder.name, place.path, limit)
        ]

    def destination(self, source: str, href: str) -> Destination:
        """Where a link written ``href`` in the window path ``source`` leads."""
        from explorer.tui.link_following import destination

        place, index = self._index_for(source)
        found = destination(index, place.folder.settings.root, place.path, href)
        if found.path is None or not self.several:
            return found
        return replace(found, path=self.window_path(place.folder.name, found.path))
