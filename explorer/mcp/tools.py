"""The tools' work, without the protocol: each takes its validated arguments and returns its
answer model (:mod:`explorer.api.answers`), or raises :class:`ToolFailure` with one line.

Every answer that reads the index says how far the index is behind the folder (``stale``),
and marks the files in it that changed on disk since they were indexed (:mod:`.freshness`).
Calls run one at a time.

A server of several folders (:mod:`.folders`) answers for all of them as named collections:
``search`` ranks every collection's files as one (the core's
:class:`~explorer.core.retrieval.collections.Collections`), ``related`` finds neighbours in
every collection, and a tool that takes a path works in its ``collection`` (or in the only one
holding the path). Every file an answer names then carries its ``collection``; with one folder
no answer names one, as before.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from explorer.api.answers import (
    CollectionAnswer,
    CollectionsAnswer,
    CollectionStatusesAnswer,
    FileIndexEntry,
    FileIndexState,
    IndexStatusAnswer,
    LinksAnswer,
    OmitReason,
    OmittedFile,
    ReadAnswer,
    ReadManyAnswer,
    ReadManyFile,
    RelatedAnswer,
    ScopeAnswer,
    SearchAnswer,
    Staleness,
    StatusAnswer,
    Upkeep,
    iso_time,
)
from explorer.api.requests import SearchOptions
from explorer.core.errors import ExplorerError, describe
from explorer.core.indexing.disk_state import scan_rules
from explorer.core.indexing.embed_priority import Focus
from explorer.core.ingest.documents import ScannedFile
from explorer.core.ingest.safe_paths import resolve_inside
from explorer.core.ingest.scanner import scan_path
from explorer.core.models import FileState
from explorer.core.retrieval.query import PathFilter, PathPatternError, QueryError
from explorer.core.store.index import Index, NoIndex
from explorer.core.store.manifest_records import FileRecord
from explorer.settings.config import Settings

if TYPE_CHECKING:
    from explorer.core.retrieval.agent_context import ContextOptions
    from explorer.core.retrieval.search import FileHit, SearchRequest
from explorer.mcp.arguments import (
    CollectionSearchArguments,
    CollectionStatusArguments,
    IndexStatusArguments,
    NoArguments,
    PathArguments,
    ReadArguments,
    ReadManyArguments,
    RelatedArguments,
    SearchArguments,
)
from explorer.mcp.cursor import fingerprint, make_cursor, read_cursor
from explorer.mcp.folders import ServedFolder, ServedFolders
from explorer.mcp.freshness import Freshness
from explorer.mcp.keeper import IndexKeeper
from explorer.mcp.reading import FileText, lines_of, load_file, read_range

log = logging.getLogger(__name__)

_T = TypeVar("_T")

RESOURCES_PER_PAGE = 500
"""Files one ``resources/list`` page names."""


class ToolFailure(Exception):
    """A tool call that cannot be answered; the message goes back to the agent as is."""


@dataclass(frozen=True)
class ResourceFile:
    """A readable file as a resource names it (``COLLECTION/PATH`` over several folders)."""

    path: str
    size: int


class ExplorerTools:
    """The work of every tool over one root's index, or several folders' (``folders``)."""

    def __init__(
        self,
        settings: Settings,
        keeper: IndexKeeper,
        freshness: Freshness,
        folders: ServedFolders | None = None,
    ) -> None:
        """``folders``: every folder served (``settings``, ``keeper`` and ``freshness`` are
        its first's); left out, the one folder of ``settings``."""
        self.settings = settings
        self.keeper = keeper
        self.freshness = freshness
        self.folders = folders or ServedFolders(
            [ServedFolder(settings.root.name, settings, keeper, freshness)]
        )
        self._lock = threading.Lock()

    @classmethod
    def serving(cls, folders: ServedFolders) -> ExplorerTools:
        """The tools over ``folders``."""
        first = folders.first
        return cls(first.settings, first.keeper, first.freshness, folders)

    @property
    def across(self) -> bool:
        """Whether the tools take collections and scopes (several folders, or named scopes)."""
        return self.folders.several or bool(self.folders.scopes)

    def _name(self, folder: ServedFolder) -> str | None:
        """The collection an answer names: only when several folders are served."""
        return folder.name if self.folders.several else None

    def call(self, work: Callable[[], _T]) -> _T:
        """Run one tool's work; any failure becomes a :class:`ToolFailure` with one line."""
        with self._lock:
            try:
                return work()
            except ToolFailure:
                raise
            except ExplorerError as error:
                raise ToolFailure(describe(error)) from error
            # The boundary of a tool call: the agent gets one line and the server stays up;
            # the traceback goes to the server's log (stderr).
            except Exception as error:
                log.exception("a tool call failed")
                raise ToolFailure(describe(error)) from error

    # -- search -------------------------------------------------------------------------------
    def search(self, args: SearchArguments) -> SearchAnswer:
        from explorer.core.retrieval.agent_context import shape_answer
        from explorer.core.retrieval.search import search

        if self.across:
            return self._search_collections(args)
        request_print, offset, context, limit, request = self._search_setup(args)
        index = self.keeper.index()
        if self.folders.first.gone:
            notes = [self._gone(self.folders.first)]
            return SearchAnswer(
                mode=args.mode, results=[], notes=notes, stale=self._staleness(index)
            )
        # The hits and their manifest rows in one commit: a hit's file is judged stale against
        # the commit its passages came from, not a later one the live index landed meanwhile.
        # The walk counting the answer's stale stays outside: it is kept by the last commit.
        with index.keywords.one_view():
            response = search(index, request)
            more = len(response.results) > limit
            response.results = response.results[:limit]
            answer = shape_answer(index, response, context)
            shown = [hit.path for hit in answer.response.results]
            # Changed files first: a change a stat sees makes the answer's count see it too.
            changed = self.freshness.changed_files(index.keywords, shown)
        stale = self._staleness(index, changed)
        if answer.budget is not None and answer.budget.files_cut:
            more = True
        self.keeper.focus(Focus(results=tuple(shown)))
        return SearchAnswer.build(
            answer,
            explain=args.explain,
            offsets=args.offsets,
            stale_paths=changed,
            stale=stale,
            next_cursor=make_cursor(request_print, offset + len(shown)) if more and shown else None,
        )

    def _search_setup(
        self, args: SearchArguments
    ) -> tuple[str, int, ContextOptions, int, SearchRequest]:
        """What every search call starts from: the request's fingerprint (for the cursor), the
        offset its cursor gives, the answer's shaping options, the page size and the core's
        request (one more file than the page, to tell whether there is a next one); the path
        patterns checked."""
        from explorer.core.retrieval.agent_context import ContextOptions

        request_print = fingerprint(args.model_dump(mode="json", exclude={"cursor"}))
        offset = read_cursor(args.cursor, request_print) if args.cursor else 0
        for name, patterns in (("paths", args.paths), ("exclude", args.exclude)):
            try:
                PathFilter(tuple(patterns))
            except PathPatternError as error:
                raise QueryError(f"{name} {error.pattern!r}: {error.problem}") from None
        context = ContextOptions(args.content, args.max_tokens, args.metadata_only)
        context.check()
        limit = args.limit or self.settings.default_limit
        chosen = args if isinstance(args, CollectionSearchArguments) else None
        request = SearchOptions(
            mode=args.mode,
            paths=tuple(args.paths),
            tags=tuple(args.tags),
            versions=tuple(args.versions),
            exclude=tuple(args.exclude),
            limit=limit + 1,
            offset=offset,
            per_file=args.per_file,
            min_score=args.min_score,
            collections=tuple(chosen.collections) if chosen else (),
            scopes=tuple(chosen.scopes) if chosen else (),
        ).request(args.query, self.settings)
        return request_print, offset, context, limit, request

    def _search_collections(self, args: SearchArguments) -> SearchAnswer:
        """``search`` over every collection (or those ``collections`` and ``scopes`` keep),
        ranked as one."""
        from explorer.core.retrieval.agent_context import shape_answer

        request_print, offset, context, limit, request = self._search_setup(args)
        named = {name.casefold() for name in request.collections}
        searched = [f for f in self.folders if not named or f.name.casefold() in named]
        gone = [folder for folder in searched if folder.gone]
        notes = [self._gone(folder) for folder in gone]
        if gone and searched == gone:
            return SearchAnswer(
                mode=args.mode, results=[], notes=notes, stale=self._all_staleness()
            )
        if gone and named:
            left_out = {folder.name.casefold() for folder in gone}
            kept = [name for name in request.collections if name.casefold() not in left_out]
            request = replace(request, collections=tuple(kept))
        collections = self.folders.collections(self.folders.present())
        with collections.one_view():  # the hits and their manifest rows: as in search
            response = collections.search(request)
            response.notes = [*response.notes, *notes]
            more = len(response.results) > limit
            response.results = response.results[:limit]
            if not self.folders.several:  # one folder with named scopes: nothing to name
                for hit in response.results:
                    hit.collection = ""
            texts = self._passage_texts(response.results) if args.content else None
            answer = shape_answer(self.keeper.index(), response, context, texts=texts)
            shown = self._by_folder((hit.collection, hit.path) for hit in answer.response.results)
            changed = self._changed_across(shown)
        stale = self._all_staleness()
        if answer.budget is not None and answer.budget.files_cut:
            more = True
        for folder, paths in shown:
            folder.keeper.focus(Focus(results=tuple(paths)))
        return SearchAnswer.build(
            answer,
            explain=args.explain,
            offsets=args.offsets,
            stale_paths=changed,
            stale=stale,
            next_cursor=make_cursor(request_print, offset + len(answer.response.results))
            if more and answer.response.results
            else None,
        )

    def _passage_texts(self, hits: Sequence[FileHit]) -> dict[str, str]:
        """The whole text of every passage of ``hits``, by chunk id, from each one's index."""
        texts: dict[str, str] = {}
        for folder, ids in self._by_folder(
            (hit.collection, p.chunk_id) for hit in hits for p in hit.passages
        ):
            found = folder.keeper.index().keywords.chunks_by_id(ids)
            texts.update((cid, chunk.text) for cid, chunk in found.items())
        return texts

    def _by_folder(self, named: Iterable[tuple[str, str]]) -> list[tuple[ServedFolder, list[str]]]:
        """(collection, value) pairs grouped by folder, in the folders' order (with one
        folder, every value is its)."""
        pairs = list(named)
        if not self.folders.several:
            return [(self.folders.first, [value for _name, value in pairs])] if pairs else []
        grouped: dict[str, list[str]] = {}
        for name, value in pairs:
            grouped.setdefault(name.casefold(), []).append(value)
        return [
            (folder, grouped[folder.name.casefold()])
            for folder in self.folders
            if folder.name.casefold() in grouped
        ]

    def _all_staleness(self) -> Staleness:
        """How far every folder's index is behind it (added up over several)."""
        if not self.folders.several:
            return self._staleness(self.keeper.index())
        return Staleness.combine(
            [
                (folder.name, folder.freshness.staleness(folder.keeper.index().keywords))
                for folder in self.folders
            ]
        )

    def _changed_across(self, shown: list[tuple[ServedFolder, list[str]]]) -> set[str]:
        """The shown files changed on disk since indexed, named as answers mark them
        (``COLLECTION/PATH`` over several folders)."""
        changed: set[str] = set()
        for folder, paths in shown:
            found = folder.freshness.changed_files(folder.keeper.index().keywords, paths)
            name = self._name(folder)
            changed.update(f"{name}/{path}" if name else path for path in found)
        return changed

    # -- related, links -----------------------------------------------------------------------
    def related(self, args: RelatedArguments) -> RelatedAnswer:
        from explorer.core.retrieval.related import FileNotIndexed, NoVectorYet, related_files

        folder = self._present(self.folders.pick(getattr(args, "collection", None), args.path))
        rel_path = resolve_inside(folder.settings.root, args.path).rel_path
        index = folder.keeper.index()
        if self.folders.several:
            collections = self.folders.collections(self.folders.present())
            with collections.one_view():  # the neighbours and their manifest rows: as in search
                try:
                    across = collections.related(folder.name, rel_path, args.limit, args.unlinked)
                except (FileNotIndexed, NoVectorYet) as error:
                    raise ToolFailure(self._not_ready(rel_path, error, folder)) from None
                shown = self._by_folder((n.collection, n.related.path) for n in across)
                changed = self._changed_across(shown)
            stale = self._all_staleness()
            return RelatedAnswer.build(
                rel_path,
                [n.related for n in across],
                stale_paths=changed,
                stale=stale,
                collection=folder.name,
                collections=[n.collection for n in across],
                unlinked=args.unlinked,
            )
        with index.keywords.one_view():
            try:
                neighbours = related_files(index, rel_path, args.limit, unlinked=args.unlinked)
            except (FileNotIndexed, NoVectorYet) as error:
                raise ToolFailure(self._not_ready(rel_path, error, folder)) from None
            paths = [neighbour.path for neighbour in neighbours]
            changed = self.freshness.changed_files(index.keywords, paths)
        stale = self._staleness(index, changed)
        return RelatedAnswer.build(
            rel_path,
            neighbours,
            stale_paths=changed,
            stale=stale,
            unlinked=args.unlinked,
        )

    def _not_ready(self, rel_path: str, error: ExplorerError, folder: ServedFolder) -> str:
        """What to say of a file related files cannot start from yet: while the index is kept
        current (by this server or another explorer), that it is on its way."""
        from explorer.core.retrieval.related import NoVectorYet

        upkeep = folder.keeper.upkeep
        who = "this server" if upkeep is Upkeep.LIVE else "the explorer that writes the index"
        if upkeep is Upkeep.OFF:
            return describe(error)
        if isinstance(error, NoVectorYet):
            if error.state is not FileState.PENDING:
                return describe(error)
            folder.keeper.focus(Focus(open_file=rel_path))
            return (
                f"{rel_path} waits for its vectors, which {who} computes; ask again in a few "
                "seconds (search by keyword finds it already)"
            )
        rules = scan_rules(folder.settings)
        if isinstance(scan_path(rules, rel_path, folder.settings.max_file_bytes), ScannedFile):
            return (
                f"{rel_path} is not in the index yet; {who} takes it in: ask again in a few seconds"
            )
        return describe(error)

    def links(self, args: PathArguments) -> LinksAnswer:
        from explorer.core.retrieval.links import file_links

        folder = self._present(self.folders.pick(getattr(args, "collection", None), args.path))
        rel_path = resolve_inside(folder.settings.root, args.path).rel_path
        index = folder.keeper.index()
        found = file_links(index, rel_path)
        if not found.exists and not found.backlinks:
            raise ToolFailure(f"{rel_path}: no such file (and nothing links to it)")
        answer = LinksAnswer.build(found, stale=folder.freshness.staleness(index.keywords))
        return answer.model_copy(update={"collection": self._name(folder)})

    # -- reading ------------------------------------------------------------------------------
    def read(self, args: ReadArguments) -> ReadAnswer:
        folder = self._present(self.folders.pick(getattr(args, "collection", None), args.path))
        file = load_file(folder.settings, args.path)
        answer = read_range(file, args.start_line, args.end_line, args.start_char)
        changed = self._changed([file.path], folder)
        return answer.model_copy(
            update={"stale": True if changed else None, "collection": self._name(folder)}
        )

    def read_many(self, args: ReadManyArguments) -> ReadManyAnswer:
        """Whole files in order while they fit the budget; a file that does not fit is listed
        with its size and the next ones are still tried. At most ``max_files`` files are
        looked at: the others are only counted (``more``)."""
        names = self._read_many_names(args)
        unit, budget = ("tokens", args.max_tokens) if args.max_tokens else ("bytes", args.max_bytes)
        count = self._token_count() if args.max_tokens else _utf8_bytes
        read: list[tuple[ServedFolder, FileText]] = []
        omitted: list[OmittedFile] = []
        used = 0
        for folder, name in names[: args.max_files]:
            collection = self._name(folder) if folder is not None else None
            try:
                if folder is None:  # placed in no single collection: say why
                    folder = self.folders.pick(None, name)
                    collection = self._name(folder)
                file = load_file(self._present(folder).settings, name)
            except (ExplorerError, OSError, ToolFailure) as error:
                omitted.append(
                    OmittedFile(
                        collection=collection,
                        path=name,
                        reason=OmitReason.UNREADABLE,
                        detail=str(error) if isinstance(error, ToolFailure) else describe(error),
                    )
                )
                continue
            cost = count(file.text)
            if used + cost > budget:
                omitted.append(
                    OmittedFile(
                        collection=collection,
                        path=file.path,
                        reason=OmitReason.OVER_BUDGET,
                        size=cost,
                    )
                )
                continue
            used += cost
            read.append((folder, file))
        changed = {
            (folder.name, path)
            for folder in self.folders
            for path in self._changed([f.path for own, f in read if own is folder], folder)
        }
        return ReadManyAnswer(
            files=[
                ReadManyFile(
                    collection=self._name(folder),
                    path=file.path,
                    total_lines=len(lines_of(file.text)),
                    text=file.text,
                    stale=True if (folder.name, file.path) in changed else None,
                )
                for folder, file in read
            ],
            omitted=omitted or None,
            more=max(0, len(names) - args.max_files) or None,
            used=used,
            budget=budget,
            unit=unit,
        )

    def _read_many_names(self, args: ReadManyArguments) -> list[tuple[ServedFolder | None, str]]:
        """The paths given, then the indexed files the glob matches, each once (as the
        index names it), each with its folder: ``collection``'s, the only one, or (several
        folders, no collection) the one holding the path (None: to be said why when read)."""
        collection = getattr(args, "collection", None)
        chosen = self.folders.pick(collection) if collection or not self.folders.several else None
        names: list[tuple[ServedFolder | None, str]] = []
        for name in args.paths:
            key = _as_index_key(name)
            if chosen is not None:
                names.append((chosen, key))
                continue
            try:
                names.append((self.folders.pick(None, key), key))
            except ExplorerError:
                names.append((None, key))
        if args.glob is not None:
            try:
                pattern = PathFilter((args.glob,))
            except PathPatternError as error:
                raise QueryError(f"glob {error.pattern!r}: {error.problem}") from None
            matched = []
            for folder in [chosen] if chosen is not None else list(self.folders):
                records = folder.keeper.index().keywords.files()
                own = pattern.select(p for p, r in records.items() if r.state in _READABLE)
                matched += [(folder, path) for path in own]
            if not matched and not names:
                raise ToolFailure(f"no indexed file matches {args.glob!r}")
            names += matched
        if not names:
            raise ToolFailure("give paths, a glob, or both")
        return list(dict.fromkeys(names))

    def _token_count(self) -> Callable[[str], int]:
        from explorer.core.retrieval.agent_context import token_counter

        return token_counter(self.keeper.index())

    # -- the index ----------------------------------------------------------------------------
    def status(self, _args: NoArguments) -> StatusAnswer:
        return self._status(self.folders.first)

    def statuses(self, args: CollectionStatusArguments) -> CollectionStatusesAnswer:
        """Each collection's status (``collection``'s only, when given)."""
        chosen = [self.folders.named(args.collection)] if args.collection else list(self.folders)
        return CollectionStatusesAnswer(
            collections=[
                self._status(folder).model_copy(update={"collection": folder.name})
                for folder in chosen
            ]
        )

    def _status(self, folder: ServedFolder) -> StatusAnswer:
        index = folder.keeper.index()
        changes = folder.freshness.changes(index.keywords)
        status = index.status(disk=changes)
        return StatusAnswer.build(
            status,
            stale=folder.freshness.staleness(index.keywords),
            upkeep=self._upkeep(folder),
        ).model_copy(update={"collection": self._name(folder)})

    def collections(self, _args: NoArguments) -> CollectionsAnswer:
        """The open collections (each with its index's size and staleness) and the scopes."""
        answers = []
        for folder in self.folders:
            try:
                index = folder.keeper.index()
            except ExplorerError as error:
                answers.append(
                    CollectionAnswer(
                        name=folder.name,
                        root=str(folder.settings.root),
                        files=0,
                        chunks=0,
                        problem=describe(error),
                    )
                )
                continue
            counts = index.keywords.counts()
            answers.append(
                CollectionAnswer(
                    name=folder.name,
                    root=str(folder.settings.root),
                    files=counts[FileState.FRESH] + counts[FileState.PENDING],
                    chunks=counts["chunks"],
                    stale=folder.freshness.staleness(index.keywords),
                    upkeep=self._upkeep(folder),
                    problem=self._gone(folder) if folder.gone else None,
                )
            )
        return CollectionsAnswer(
            collections=answers,
            scopes=[
                ScopeAnswer(
                    name=scope.name,
                    description=scope.description or None,
                    paths=list(scope.paths) or None,
                    extensions=list(scope.extensions) or None,
                    collections=list(scope.collections) or None,
                )
                for scope in self.folders.scopes
            ],
        )

    def index_status(self, args: IndexStatusArguments) -> IndexStatusAnswer:
        collection = getattr(args, "collection", None)
        chosen = [self.folders.pick(collection)] if collection else list(self.folders)
        entries = []
        for folder in chosen:
            scope = self._scope(args.path, folder)
            name = self._name(folder)
            entries += [
                entry.model_copy(update={"collection": name})
                for entry in self._index_entries(folder, scope)
            ]
        order = {self._name(folder): place for place, folder in enumerate(chosen)}
        entries.sort(
            key=lambda entry: (
                entry.state is FileIndexState.FRESH,
                order[entry.collection],
                entry.path,
            )
        )
        counts = Counter(entry.state for entry in entries)
        return IndexStatusAnswer(
            collection=self._name(chosen[0]) if collection else None,
            path=args.path,
            counts=dict(sorted(counts.items())),
            files=entries[: args.limit],
            more=max(0, len(entries) - args.limit) or None,
        )

    def _index_entries(
        self, folder: ServedFolder, scope: PathFilter | None
    ) -> list[FileIndexEntry]:
        """The index state of ``folder``'s files that ``scope`` keeps."""
        index = folder.keeper.index()
        records = index.keywords.files()
        changes = folder.freshness.changes(index.keywords)
        edited, deleted = set(changes.edited), set(changes.deleted)
        entries = []
        for path in sorted({*records, *changes.new}):
            if scope is not None and not scope.matches(path):
                continue
            record = records.get(path)
            if record is None:
                entries.append(FileIndexEntry(path=path, state=FileIndexState.NEW))
                continue
            state = (
                FileIndexState.DELETED
                if path in deleted
                else FileIndexState.EDITED
                if path in edited
                else _INDEX_STATES[record.state]
            )
            entries.append(_entry(record, state))
        return entries

    def _scope(self, path: str, folder: ServedFolder) -> PathFilter | None:
        """The files ``index_status`` reports on: all for ``.``, else a prefix or glob that
        stays inside the root."""
        text = path.strip()
        if text in ("", ".", "./"):
            return None
        if not any(char in text for char in "*?["):
            return PathFilter((resolve_inside(folder.settings.root, text).rel_path,))
        if text.startswith(("/", "~")) or ".." in text.split("/"):
            raise ToolFailure(f"{path}: give a file, folder or glob relative to the root")
        try:
            return PathFilter((text,))
        except PathPatternError as error:
            raise QueryError(f"path {error.pattern!r}: {error.problem}") from None

    # -- resources ----------------------------------------------------------------------------
    def resource_page(self, cursor: str | None) -> tuple[list[ResourceFile], str | None]:
        """One page of the readable indexed files (by path; over several folders by
        collection, then path, named ``COLLECTION/PATH``), and the cursor of the next."""
        page_print = fingerprint("resources")
        offset = read_cursor(cursor, page_print) if cursor else 0
        readable: list[ResourceFile] = []
        for folder in self.folders.present():
            records = folder.keeper.index().keywords.files()
            name = self._name(folder)
            readable += sorted(
                (
                    ResourceFile(f"{name}/{r.path}" if name else r.path, r.size)
                    for r in records.values()
                    if r.state in _READABLE
                ),
                key=lambda r: r.path,
            )
        page = readable[offset : offset + RESOURCES_PER_PAGE]
        end = offset + len(page)
        return page, make_cursor(page_print, end) if end < len(readable) else None

    def resource_text(self, path: str) -> FileText:
        """A file's whole text, as ``read`` would give it (``COLLECTION/PATH`` over several
        folders)."""
        if not self.folders.several:
            return load_file(self.settings, path)
        name, _slash, rest = path.partition("/")
        return load_file(self.folders.named(name).settings, rest)

    # -- freshness ----------------------------------------------------------------------------
    def _gone(self, folder: ServedFolder) -> str:
        """What to say of a folder gone from disk."""
        named = f"collection {folder.name}: " if self.folders.several else ""
        return (
            f"{named}{folder.settings.root} is gone (deleted or moved away): its files are "
            "left out until a folder is there again"
        )

    def _present(self, folder: ServedFolder) -> ServedFolder:
        """``folder``, unless it is gone from disk (then the call fails saying so)."""
        if folder.gone:
            raise ToolFailure(self._gone(folder))
        return folder

    def _upkeep(self, folder: ServedFolder) -> Upkeep:
        """Who keeps ``folder``'s index current: while the folder is gone, nobody yet."""
        upkeep = folder.keeper.upkeep
        return Upkeep.WAITING_FOR_FOLDER if upkeep is not Upkeep.OFF and folder.gone else upkeep

    def _staleness(self, index: Index, seen: Collection[str] = ()) -> Staleness:
        """The answer's ``stale``, counting ``seen`` (its files found changed just before)."""
        return self.freshness.staleness(index.keywords, seen)

    def _changed(self, paths: list[str], folder: ServedFolder) -> set[str]:
        """Those of ``paths`` (of ``folder``) changed since indexed; none while the folder
        has no index."""
        if not paths:
            return set()
        try:
            index = folder.keeper.index()
        except NoIndex:
            return set()
        return folder.freshness.changed_files(index.keywords, paths)


_INDEX_STATES = {
    FileState.FRESH: FileIndexState.FRESH,
    FileState.PENDING: FileIndexState.WAITING_FOR_VECTORS,
    FileState.SKIPPED: FileIndexState.SKIPPED,
    FileState.FAILED: FileIndexState.FAILED,
}
_READABLE = (FileState.FRESH, FileState.PENDING)


def _entry(record: FileRecord, state: FileIndexState) -> FileIndexEntry:
    return FileIndexEntry(
        path=record.path,
        state=state,
        reason=record.reason or None,
        chunks=record.chunk_count or None,
        indexed_at=iso_time(record.updated_at) if record.updated_at else None,
    )


def _as_index_key(path: str) -> str:
    """``./notes/a.md`` as ``notes/a.md``, so a file given twice is read once (the path is
    checked when it is read)."""
    parts = [part for part in path.strip().split("/") if part not in ("", ".")]
    return "/".join(parts) if parts and not path.startswith("/") else path


def _utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogateescape"))
