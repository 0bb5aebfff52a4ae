"""Several folders, one explorer: named collections searched as one, and named scopes.

A *collection* is a folder with a name and its own index (its own rules: ``.gitignore``,
``exclude``, ``extensions``). :class:`Collections` holds the open collections of a window, a
command or an MCP server, and answers for all of them at once:

- :meth:`Collections.search` ranks every collection's candidates together, fused once
  (:mod:`explorer.core.retrieval.merged_search`), so a score means the same in every folder;
  ``collection:NAME`` keeps only some collections, ``scope:NAME`` only a scope's files. Each
  result names its ``collection``; its ``path`` stays relative to its own folder.
- :meth:`Collections.status` reports each collection on its own.
- :meth:`Collections.related` finds related files in every collection: neighbours are by
  content, and one model embeds them all, so a note and a page of another folder about the
  same thing are neighbours (:mod:`explorer.core.retrieval.related_across`).
- :meth:`Collections.links` stays within the file's collection: a link is a path relative to
  its file or its folder's root, and one that climbs out of the root is no reference to a file
  of the folder.

Why one index per folder, searched together, rather than one index holding every folder:
adding a folder that is indexed on its own then costs opening its index (milliseconds, nothing
embedded again), the folder keeps its own rules and its own index for a window on it alone,
and the ranking is the same as one index's (``benchmarks/results/collections.md``).

A *scope* (:class:`Scope`) is a saved set of path globs and extensions with a description
(envoy's named indexes): ``scope:curator`` keeps the files of every collection (or of the
collections it names) that match one of its globs and one of its extensions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from explorer.core.embed.embedder import Embedder
from explorer.core.indexing.disk_state import status_against_disk
from explorer.core.retrieval.file_filter import FileFilter
from explorer.core.retrieval.links import FileLinks, file_links
from explorer.core.retrieval.merged_search import MergedPlan, SearchedCollection
from explorer.core.retrieval.query import QueryError
from explorer.core.retrieval.related_across import RelatedAcross, related_across
from explorer.core.retrieval.scopes import NAME, CollectionsError, Scope, check_name
from explorer.core.retrieval.search import FileHit, SearchRequest, SearchResponse, run_search
from explorer.core.safe_text import quoted
from explorer.core.settings import IndexSettings
from explorer.core.store.index import Index, Status


@dataclass(frozen=True)
class Collection:
    """A named folder and its index."""

    name: str
    index: Index

    @property
    def root(self) -> Path:
        return self.index.settings.root


@dataclass(frozen=True)
class CollectionStatus:
    """One collection's status."""

    name: str
    status: Status


def folder_name(folder: Path) -> str:
    """The name a folder gets when nothing names it: its directory's name, with every run of
    characters a name may not hold made one ``-`` (``My Notes`` is ``My-Notes``)."""
    name = re.sub(r"[^\w.-]+", "-", folder.name).strip("-")
    return name if NAME.fullmatch(name) else "root"


def check_apart(folders: Sequence[tuple[str, Path]]) -> None:
    """Refuse (:class:`CollectionsError`) folders (name, resolved folder) of which one is
    inside another: its files would be listed twice, once in each collection. One line names
    both and what to do."""
    for name, root in folders:
        for other_name, other in folders:
            if root != other and root.is_relative_to(other):
                raise CollectionsError(
                    f"{root} ({name}) is inside {other} ({other_name}), whose collection holds"
                    f" its files already: open one of the two"
                )


def distinct_names(folders: Sequence[Path], taken: Iterable[str] = ()) -> list[str]:
    """A distinct name for each folder, none of them in ``taken`` (compared without case).

    A folder is named after its directory (:func:`folder_name`). Folders whose names clash, or
    whose name is taken, get their parent directories' names in front, one at a time, until
    they differ (``/a/work/docs`` and ``/a/play/docs`` are ``work-docs`` and ``play-docs``); a
    name still taken after the whole path gets ``-2``, ``-3``…
    """
    reserved = {name.casefold() for name in taken}

    def named(folder: Path, depth: int) -> str:
        parts = [folder, *folder.parents][:depth]
        return "-".join(folder_name(part) for part in reversed(parts) if part.name)

    def clashes(position: int, depth: int) -> bool:
        mine = named(folders[position], depth).casefold()
        return mine in reserved or any(
            named(other, depth).casefold() == mine
            for i, other in enumerate(folders)
            if i != position
        )

    used: set[str] = set(reserved)
    names: list[str] = []
    for position, folder in enumerate(folders):
        depth, deepest = 1, max(1, len(folder.parts) - 1)
        while depth < deepest and clashes(position, depth):
            depth += 1
        base = named(folder, depth) or "root"
        name, number = base, 2
        while name.casefold() in used:
            name, number = f"{base}-{number}", number + 1
        used.add(name.casefold())
        names.append(name)
    return names


class Collections:
    """The open collections of one window, command or server, searched as one.

    Opening is cheap: each index opens its SQLite database at once and Chroma and the model on
    first use, as :class:`~explorer.core.store.index.Index` does. Every collection must have
    been indexed with one model (cosines of two models are not comparable).
    """

    def __init__(
        self, collections: Sequence[Collection] = (), scopes: Sequence[Scope] = ()
    ) -> None:
        self._collections: list[Collection] = []
        self._scopes: dict[str, Scope] = {}
        for scope in scopes:
            if scope.name.casefold() in self._scopes:
                raise CollectionsError(f"two scopes are named {quoted(scope.name)}")
            self._scopes[scope.name.casefold()] = scope
        for collection in collections:
            self.add(collection)

    @classmethod
    def open(
        cls,
        folders: Sequence[tuple[str, IndexSettings]],
        scopes: Sequence[Scope] = (),
        embedder: Embedder | None = None,
    ) -> Collections:
        """Open the existing indexes of ``folders`` (name, settings) for reading; a folder that
        has no index is :class:`~explorer.core.store.index.NoIndex`."""
        opened = cls(scopes=scopes)
        try:
            for name, settings in folders:
                opened.add(Collection(name, Index.open_existing(settings, embedder)))
        except BaseException:
            opened.close()
            raise
        return opened

    # -- the collections ------------------------------------------------------------------
    def __iter__(self) -> Iterator[Collection]:
        return iter(list(self._collections))

    def __len__(self) -> int:
        return len(self._collections)

    @property
    def names(self) -> list[str]:
        return [collection.name for collection in self._collections]

    @property
    def scopes(self) -> list[Scope]:
        """The named scopes, as given."""
        return list(self._scopes.values())

    def get(self, name: str) -> Collection:
        """The open collection called ``name`` (without regard to case)."""
        for collection in self._collections:
            if collection.name.casefold() == name.casefold():
                return collection
        known = ", ".join(self.names) or "none"
        raise QueryError(f"no collection {quoted(name)} is open (open: {known})")

    def add(self, collection: Collection) -> None:
        """Add an open collection (its index already built: nothing is embedded again).

        Refused with :class:`CollectionsError` when its name or folder is taken, or when its
        index was made with another model than the others'."""
        check_name(collection.name)
        for other in self._collections:
            if other.name.casefold() == collection.name.casefold():
                raise CollectionsError(f"two collections are named {collection.name!r}")
            if other.root == collection.root:
                raise CollectionsError(
                    f"{collection.root} is open already, as collection {other.name!r}"
                )
        check_apart([(c.name, c.root) for c in (*self._collections, collection)])
        if self._collections:
            first = self._collections[0]
            mine, theirs = _model_of(collection.index), _model_of(first.index)
            if mine != theirs:
                raise CollectionsError(
                    f"collection {collection.name!r} was indexed with {mine} and "
                    f"{first.name!r} with {theirs}: collections must share one model (run "
                    f"`explorer index {collection.root} --model {theirs}`)"
                )
        self._collections.append(collection)

    def remove(self, name: str) -> Collection:
        """Take a collection out (its index is closed) and return it."""
        collection = self.get(name)
        self._collections.remove(collection)
        collection.index.close()
        return collection

    def close(self) -> None:
        """Close every collection's index."""
        for collection in self._collections:
            collection.index.close()
        self._collections.clear()

    def scope(self, name: str) -> Scope:
        """The named scope ``name`` (without regard to case)."""
        scope = self._scopes.get(name.casefold())
        if scope is None:
            known = ", ".join(s.name for s in self._scopes.values()) or "none"
            raise QueryError(f"no scope {quoted(name)} (scopes: {known})")
        return scope

    def _scope_of(self, name: str, searched: Sequence[str]) -> Scope:
        """The scope ``name``, refused (:class:`QueryError`) when it covers none of the
        collections ``searched``: it would keep no file, for no reason a result could say."""
        scope = self.scope(name)
        if scope.collections and not any(scope.covers(other) for other in searched):
            covered = ", ".join(scope.collections)
            raise QueryError(
                f"scope {quoted(scope.name)} covers {covered}, none of the collections"
                f" searched ({', '.join(searched)})"
            )
        return scope

    @property
    def embedder(self) -> Embedder:
        """The model every collection shares (the first collection's index loads it)."""
        if not self._collections:
            raise CollectionsError("no collection is open")
        return self._collections[0].index.embedder

    # -- search ---------------------------------------------------------------------------
    def search(self, request: SearchRequest, shared_scale: bool = True) -> SearchResponse:
        """Search every collection (or those ``request.collections`` names), ranked as one.

        ``shared_scale=False`` leaves each index's BM25 on its own scale (for measuring).

        Every read sees one commit of each folder's keyword index (:meth:`one_view`), the legs
        ranked on a pool of threads (a folder a thread) and the passages read here alike: a
        file the live index replaces meanwhile is answered as it was ranked."""
        with self.one_view():
            return run_search(_Source(self, shared_scale), request)

    @contextmanager
    def one_view(self) -> Iterator[None]:
        """Every read of the block on this thread sees one commit of each collection's keyword
        index (:meth:`~explorer.core.store.keywords.KeywordIndex.one_view`)."""
        with ExitStack() as views:
            for collection in self._collections:
                views.enter_context(collection.index.keywords.one_view())
            yield

    def plan(self, request: SearchRequest, shared_scale: bool = True) -> MergedPlan:
        """Resolve ``request``'s collections, scopes and file filter, collection by
        collection, to the files a search may rank."""
        if not self._collections:
            raise CollectionsError("no collection is open")
        chosen = (
            list(dict.fromkeys(self.get(name).name for name in request.collections))
            if request.collections
            else self.names
        )
        scopes = [self._scope_of(name, chosen) for name in request.scopes]
        file_filter = request.file_filter
        searched: list[SearchedCollection] = []
        matching = 0
        for collection in self._collections:
            if collection.name not in chosen:
                continue
            keywords = collection.index.keywords
            allowed = file_filter.select(keywords)
            if scopes:
                in_scope = set().union(*(_scope_files(collection, scope) for scope in scopes))
                allowed = sorted(in_scope if allowed is None else in_scope & set(allowed))
            matching += (
                len(allowed)
                if allowed is not None
                else keywords.derived("indexed files", keywords.indexed_file_count)
            )
            searched.append(SearchedCollection(collection.name, collection.index, allowed))
        everything = not request.collections and not scopes and not file_filter.active
        first = self._collections[0].index
        return MergedPlan(
            searched,
            {c.name: c.index.keywords.statistics for c in self._collections},
            first.settings,
            lambda text: self.embedder.embed_query(text),
            _describe(chosen, request.collections, scopes, file_filter),
            None if everything else matching,
            shared_scale,
        )

    def chunk_texts(self, hits: Sequence[FileHit]) -> dict[str, str]:
        """The whole texts of the passages of ``hits`` (results of :meth:`search`), each read
        from its own collection's index, by chunk id."""
        wanted: dict[str, list[str]] = {}
        for hit in hits:
            wanted.setdefault(hit.collection, []).extend(p.chunk_id for p in hit.passages)
        texts: dict[str, str] = {}
        for name, ids in wanted.items():
            chunks = self.get(name).index.keywords.chunks_by_id(ids)
            texts.update((cid, chunk.text) for cid, chunk in chunks.items())
        return texts

    def holding(self, file: Path) -> tuple[Collection, str] | None:
        """The open collection whose folder holds the real path ``file`` (one at most: open
        folders never nest, see :func:`check_apart`), and ``file`` relative to its folder;
        None when none holds it."""
        for collection in self._collections:
            if file.is_relative_to(collection.root):
                return collection, file.relative_to(collection.root).as_posix()
        return None

    # -- status, related files and links -----------------------------------------------------------
    def status(self, disk: bool = True) -> list[CollectionStatus]:
        """Each collection's status; with ``disk``, compared with its folder (a stat walk)."""
        return [
            CollectionStatus(
                collection.name,
                status_against_disk(collection.index) if disk else collection.index.status(),
            )
            for collection in self._collections
        ]

    def related(
        self, collection: str, path: str, limit: int = 10, unlinked: bool = False
    ) -> list[RelatedAcross]:
        """The files of every collection most related to ``path`` of ``collection``
        (``unlinked``: those it does not link to yet)."""
        own = self.get(collection)
        indexes = [(c.name, c.index) for c in self._collections]
        return related_across(indexes, own.name, path, limit, unlinked=unlinked)

    def links(self, collection: str, path: str) -> FileLinks:
        """The links and backlinks of ``path`` within its collection (see the module
        docstring: links do not cross collections)."""
        return file_links(self.get(collection).index, path)


@dataclass(frozen=True)
class _Source:
    """Collections as a :class:`~explorer.core.retrieval.search.SearchSource`."""

    collections: Collections
    shared_scale: bool

    def plan(self, request: SearchRequest) -> MergedPlan:
        return self.collections.plan(request, self.shared_scale)


def _scope_files(collection: Collection, scope: Scope) -> set[str]:
    """The indexed files of ``collection`` that ``scope`` keeps (kept until the index
    changes)."""
    if not scope.covers(collection.name):
        return set()
    keywords = collection.index.keywords
    selected: set[str] = keywords.derived(("scope", scope), lambda: scope.select(keywords.paths()))
    return selected


def _describe(
    chosen: Sequence[str],
    asked: Sequence[str],
    scopes: Sequence[Scope],
    file_filter: FileFilter,
) -> str:
    """The filters of a search over collections in words."""
    parts = []
    if asked:
        parts.append(("collection " if len(chosen) == 1 else "collections ") + ", ".join(chosen))
    if scopes:
        names = " or ".join(scope.name for scope in scopes)
        parts.append(("scope " if len(scopes) == 1 else "scopes ") + names)
    if file_filter.active:
        parts.append(file_filter.describe())
    return " and ".join(parts) if parts else "all files"


def _model_of(index: Index) -> str:
    """The model an index was made with (its settings' model before anything was stored)."""
    return index.keywords.get_meta("model") or index.settings.model
